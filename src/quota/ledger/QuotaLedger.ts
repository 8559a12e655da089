import type { Cluster, Redis } from 'ioredis';
import {
  chargeOf,
  emptyPolicyState,
  periodBuckets,
  QUOTA_KINDS,
  type Period,
  type Charge,
  type Operation,
  type PolicyState,
  type QuotaKind,
} from '../policy/index.js';
import { record } from '../../metrics/index.js';
import { operationLabel } from './operationLabel.js';

export type { Period } from '../policy/index.js';
export type Scope = 'user' | 'group';

/** Units and call counts of one user or group in one period bucket. */
export interface UsageRow {
  scope: Scope;
  id: string;
  period: Period;
  bucket: string;
  units: Partial<Record<QuotaKind, number>>;
  /**
   * Per operation label (`GET /feeds/file_behaviours/{id}`, `GET /users/{id}/overall_quotas`, `ioc_delta`, ...): calls
   * answered and units by kind; `unanswered` when requests of it got no answer.
   */
  operations: Record<string, { calls: number; units: Partial<Record<QuotaKind, number>>; unanswered?: number }>;
}

export interface AuditEntry {
  id: string;
  at: string;
  user: string;
  group?: string;
  op: string;
  units: Partial<Record<QuotaKind, number>>;
  rules: number[];
  reason: string;
  /** false for a request sent that got no answer (refused, reset or timed out before the status line): kept, not charged. */
  answered?: false;
}

const MAX_TX_RETRIES = 20;
const AUDIT_MAXLEN = 5_000_000;

/**
 * Applies the quota policy to every upstream call and keeps the result in Redis: per user and
 * per group (rule 8), per period bucket (API requests per minute, day and month; the rest per
 * month, UTC), with an append-only audit stream. Each record is one optimistic transaction
 * (WATCH the user's policy state, MULTI, EXEC, retry on conflict), so concurrent workers never
 * lose a unit and rule-6 / livehunt state stays consistent with the charges.
 */
export class QuotaLedger {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly prefix: string,
  ) {}

  private key(...parts: string[]): string {
    return [this.prefix, 'ledger', ...parts].join(':');
  }

  /** Records one operation (at defaults to now) and returns what it was charged. */
  async record(input: Operation & { at?: Date }): Promise<Charge> {
    const op = { ...input, at: input.at ?? new Date() } as Operation & { at: Date };
    const stateKey = this.key('state', op.user);
    for (let attempt = 0; attempt < MAX_TX_RETRIES; attempt++) {
      await this.redis.watch(stateKey);
      const raw = await this.redis.get(stateKey);
      const state = raw ? (JSON.parse(raw) as PolicyState) : emptyPolicyState();
      const { charge, state: next } = chargeOf(op, state);
      const m = this.redis.multi();
      this.applyCharge(m, op, charge);
      const nextRaw = JSON.stringify(next);
      if (nextRaw !== (raw ?? JSON.stringify(emptyPolicyState()))) m.set(stateKey, nextRaw);
      const res = await m.exec();
      if (res !== null) {
        record({ m: 'apiCall', operation: operationLabel(op), units: charge.units as Record<string, number> });
        return charge;
      }
      // null: the state changed under us (another worker): recompute
    }
    throw new Error(`quota ledger: too much contention recording for ${op.user}`);
  }

  /**
   * Counts one call of `op` and its charge for its user and group in every period view, and
   * appends it to the audit stream; a request that got no answer (`answered` false) is counted
   * apart (`n|` instead of `c|`) and marked so in its audit entry.
   */
  private applyCharge(m: ReturnType<(Redis | Cluster)['multi']>, op: Operation & { at: Date }, charge: Charge, answered = true): void {
    const label = operationLabel(op);
    const scopes: [Scope, string][] = [['user', op.user]];
    if (op.group) scopes.push(['group', op.group]);
    const callBuckets = periodBuckets('api_requests', op.at);
    for (const [scope, id] of scopes) {
      m.sadd(this.key('index', scope), id);
      // the call is counted in every period view, even when it costs nothing (rule 3 feed reads)
      for (const b of callBuckets) m.hincrby(this.key(scope, id, b.period, b.bucket), `${answered ? 'c' : 'n'}|${label}`, 1);
      for (const [kind, units] of Object.entries(charge.units) as [QuotaKind, number][]) {
        if (!units) continue;
        for (const b of periodBuckets(kind, op.at)) {
          const k = this.key(scope, id, b.period, b.bucket);
          m.hincrby(k, `k|${kind}`, units);
          m.hincrby(k, `o|${label}|${kind}`, units);
        }
      }
    }
    const entry = {
      at: op.at.toISOString(),
      user: op.user,
      group: op.group,
      op: label,
      units: charge.units,
      rules: charge.rules,
      reason: charge.reason,
      ...(answered ? {} : { answered: false }),
    };
    m.xadd(this.key('audit'), 'MAXLEN', '~', String(AUDIT_MAXLEN), '*', 'entry', JSON.stringify(entry));
  }

  /**
   * Records a request sent that got no answer (refused or reset connection, timeout before the
   * status line): in the audit stream and counted apart (`unanswered` in usage), charged nothing,
   * since the service counts a request it answers. The service may still have received it: the
   * trace lets an operator compare with its own usage figures.
   */
  async unanswered(input: { method: string; path: string; user: string; group?: string; at?: Date }): Promise<void> {
    const op = { op: 'api' as const, ...input, at: input.at ?? new Date() };
    const m = this.redis.multi();
    this.applyCharge(
      m,
      op,
      { units: {}, rules: [], reason: 'no answer (refused, reset or timed out before the status line): not charged' },
      false,
    );
    await m.exec();
  }

  /** Usage rows for the bucket of `period` containing `at`, for one user/group or all of them. */
  async usage(q: { period: Period; at?: Date; user?: string; group?: string }): Promise<UsageRow[]> {
    const at = q.at ?? new Date();
    const bucket = periodBuckets('api_requests', at).find((b) => b.period === q.period)?.bucket as string;
    const targets: [Scope, string][] = [];
    if (q.user) targets.push(['user', q.user]);
    if (q.group) targets.push(['group', q.group]);
    if (targets.length === 0) {
      for (const scope of ['user', 'group'] as const) {
        for (const id of (await this.redis.smembers(this.key('index', scope))).sort()) targets.push([scope, id]);
      }
    }
    const rows: UsageRow[] = [];
    for (const [scope, id] of targets) {
      const h = await this.redis.hgetall(this.key(scope, id, q.period, bucket));
      rows.push(parseUsage(scope, id, q.period, bucket, h));
    }
    return rows;
  }

  /** The newest audit entries, newest first. */
  async audit(limit = 100): Promise<AuditEntry[]> {
    const raw = await this.redis.xrevrange(this.key('audit'), '+', '-', 'COUNT', limit);
    return raw.map(([id, fields]) => ({ id, ...(JSON.parse(fields[1] as string) as Omit<AuditEntry, 'id'>) }));
  }
}

function parseUsage(scope: Scope, id: string, period: Period, bucket: string, h: Record<string, string>): UsageRow {
  const row: UsageRow = { scope, id, period, bucket, units: {}, operations: {} };
  const opOf = (label: string): UsageRow['operations'][string] => (row.operations[label] ??= { calls: 0, units: {} });
  for (const [field, value] of Object.entries(h)) {
    const n = Number(value);
    const parts = field.split('|');
    if (parts[0] === 'k' && isKind(parts[1])) row.units[parts[1]] = n;
    else if (parts[0] === 'c' && parts[1] !== undefined) opOf(parts.slice(1).join('|')).calls = n;
    else if (parts[0] === 'n' && parts[1] !== undefined) opOf(parts.slice(1).join('|')).unanswered = n;
    else if (parts[0] === 'o' && parts.length >= 3) {
      const kind = parts[parts.length - 1];
      if (isKind(kind)) opOf(parts.slice(1, -1).join('|')).units[kind] = n;
    }
  }
  return row;
}

function isKind(s: string | undefined): s is QuotaKind {
  return (QUOTA_KINDS as readonly string[]).includes(s ?? '');
}
