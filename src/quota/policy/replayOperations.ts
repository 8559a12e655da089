import { accountsOf } from './accountsOf.js';
import { parseOperation } from './parseOperation.js';
import type { PolicyStateReader, StateChange } from './PolicyState.js';
import { priceOperation } from './priceOperation.js';
import { QUOTA_KINDS, type QuotaKind } from './QuotaKind.js';

/** Units consumed per user and per group (rule 8), over everything replayed; zero kinds and idle accounts are omitted. */
export interface Consumption {
  users: Record<string, Partial<Record<QuotaKind, number>>>;
  groups: Record<string, Partial<Record<QuotaKind, number>>>;
}

/** replayOperations' answer: the totals, and the lines that were refused. */
export interface ReplayResult {
  consumption: Consumption;
  /** 1-based line numbers of lines that were not JSON or not a valid operation; those lines charge nothing. */
  errors: { line: number; message: string }[];
}

/**
 * Replays operations written one JSON object per line, starting from an empty policy state, and
 * totals what they consumed per user and group across all periods (periodBuckets splits by period).
 * Lines are applied in the order given, which is what "later" means for rule 6 and which report
 * of a ruleset comes first for livehunt. Blank lines are skipped; a bad line is reported with its
 * number and the rest are still counted. `now` is the time of operations without `at`.
 */
export function replayOperations(lines: Iterable<string>, now: Date): ReplayResult {
  const replay = new OperationReplay(now);
  const errors: ReplayResult['errors'] = [];
  for (const raw of lines) {
    const refused = replay.add(raw);
    if (refused) errors.push(refused);
  }
  return { consumption: replay.consumption(), errors };
}

/**
 * replayOperations one line at a time, so a file of any length is replayed as it is read: what it
 * keeps is the policy state and the totals, never the lines.
 */
export class OperationReplay {
  private readonly state = new MapState();
  private readonly totals = { user: new Map<string, Map<QuotaKind, number>>(), group: new Map<string, Map<QuotaKind, number>>() };
  private line = 0;

  constructor(private readonly now: Date) {}

  /** Applies the next line; a line that is no valid operation is answered with why (it charges nothing). */
  add(raw: string): { line: number; message: string } | undefined {
    const line = ++this.line;
    const text = raw.trim();
    if (text === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return { line, message: `not JSON: ${(err as Error).message}` };
    }
    const parsed = parseOperation(value, this.now);
    if (!parsed.ok) return { line, message: parsed.message };
    const { charge, stateChanges } = priceOperation(parsed.op, this.state);
    this.state.apply(stateChanges);
    for (const account of accountsOf(parsed.op)) {
      const scope = this.totals[account.scope];
      const kinds = scope.get(account.id) ?? new Map<QuotaKind, number>();
      for (const [kind, units] of Object.entries(charge.units) as [QuotaKind, number][]) kinds.set(kind, (kinds.get(kind) ?? 0) + units);
      scope.set(account.id, kinds);
    }
    return undefined;
  }

  /** A line too long to be an operation: counted, charged nothing. */
  refuse(message: string): { line: number; message: string } {
    return { line: ++this.line, message };
  }

  /** What every line so far consumed. */
  consumption(): Consumption {
    return { users: toRecord(this.totals.user), groups: toRecord(this.totals.group) };
  }
}

/** Plain objects built with fromEntries (own data properties, whatever the names), zero kinds and empty accounts dropped. */
function toRecord(accounts: Map<string, Map<QuotaKind, number>>): Record<string, Partial<Record<QuotaKind, number>>> {
  const out: [string, Partial<Record<QuotaKind, number>>][] = [];
  for (const [id, kinds] of [...accounts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const units = QUOTA_KINDS.flatMap((k) => {
      const n = kinds.get(k) ?? 0;
      return n === 0 ? [] : [[k, n] as const];
    });
    if (units.length > 0) out.push([id, Object.fromEntries(units)]);
  }
  return Object.fromEntries(out);
}

/**
 * The policy state as Maps, updated in place: replay owns it, and copying an immutable
 * PolicyState on every upload or ruleset report would make a long replay quadratic.
 */
class MapState implements PolicyStateReader {
  private readonly files = new Map<string, Set<string>>();
  private readonly analyses = new Map<string, Set<string>>();
  private readonly marks = new Map<string, number>();

  hasFileGrant(user: string, sha256: string): boolean {
    return this.files.get(user)?.has(sha256) ?? false;
  }

  hasAnalysisGrant(user: string, analysisId: string): boolean {
    return this.analyses.get(user)?.has(analysisId) ?? false;
  }

  livehuntMark(user: string, ruleset: string, month: string): number {
    return this.marks.get(JSON.stringify([user, ruleset, month])) ?? 0;
  }

  apply(changes: readonly StateChange[]): void {
    for (const c of changes) {
      if (c.kind === 'rule6_grant') {
        setOf(this.files, c.user).add(c.sha256);
        if (c.analysisId !== null) setOf(this.analyses, c.user).add(c.analysisId);
      } else {
        const key = JSON.stringify([c.user, c.ruleset, c.month]);
        this.marks.set(key, Math.max(this.marks.get(key) ?? 0, c.rules));
      }
    }
  }
}

function setOf(m: Map<string, Set<string>>, key: string): Set<string> {
  let s = m.get(key);
  if (!s) m.set(key, (s = new Set()));
  return s;
}
