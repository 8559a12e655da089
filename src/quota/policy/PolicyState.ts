/** Rule 6 grants of one user: the files they uploaded while unknown, and those uploads' analyses. */
export interface Rule6Grants {
  /** Lower-case SHA-256 → true. */
  files: Record<string, true>;
  /** Analysis id (as given at upload, case-sensitive) → lower-case SHA-256 of its file. */
  analyses: Record<string, string>;
}

/**
 * What the policy remembers between operations. Plain JSON data (a ledger may store it as is),
 * keyed by user first so a ledger can keep one slice per user: an operation only ever reads and
 * writes its own user's slice.
 */
export interface PolicyState {
  /** user → rule 6 grants. */
  rule6: Record<string, Rule6Grants>;
  /** user → ruleset id → month `YYYY-MM` (UTC) → the most active rules already charged that month. */
  livehunt: Record<string, Record<string, Record<string, number>>>;
}

/** One fact a ledger must persist after an operation (chargeOf lists them; applyStateChanges folds them in). */
export type StateChange =
  /** `analysisId` is null only for hand-built uploads without one: then only GET /files/{sha256} is freed. */
  | { kind: 'rule6_grant'; user: string; sha256: string; analysisId: string | null }
  | { kind: 'livehunt_mark'; user: string; ruleset: string; month: string; rules: number };

/** The read side of the state that pricing needs; replay backs it with Maps, chargeOf with a PolicyState. */
export interface PolicyStateReader {
  hasFileGrant(user: string, sha256: string): boolean;
  hasAnalysisGrant(user: string, analysisId: string): boolean;
  livehuntMark(user: string, ruleset: string, month: string): number;
}

/** A state that remembers nothing. */
export function emptyPolicyState(): PolicyState {
  return { rule6: {}, livehunt: {} };
}

/**
 * Own-property lookup: user names and ids come from outside, and `constructor` or `__proto__`
 * must not find Object.prototype's members.
 */
export function own<T>(rec: Record<string, T> | undefined, key: string): T | undefined {
  return rec !== undefined && Object.hasOwn(rec, key) ? rec[key] : undefined;
}

/** Reads a PolicyState (tolerating slices missing from a state a ledger stored partially). */
export function readerOf(state: PolicyState): PolicyStateReader {
  return {
    hasFileGrant: (user, sha256) => own(own(state.rule6, user)?.files, sha256) === true,
    hasAnalysisGrant: (user, analysisId) => own(own(state.rule6, user)?.analyses, analysisId) !== undefined,
    livehuntMark: (user, ruleset, month) => own(own(own(state.livehunt, user), ruleset), month) ?? 0,
  };
}

/**
 * The state after `changes`, sharing untouched parts with `state` and never mutating it.
 * Computed keys and spreads create own data properties, so hostile keys stay plain data.
 * A livehunt mark never goes down: applying an older, lower mark keeps the higher one.
 */
export function applyStateChanges(state: PolicyState, changes: readonly StateChange[]): PolicyState {
  let next = state;
  for (const c of changes) {
    if (c.kind === 'rule6_grant') {
      const g = own(next.rule6, c.user) ?? { files: {}, analyses: {} };
      const grants: Rule6Grants = {
        files: { ...g.files, [c.sha256]: true },
        analyses: c.analysisId === null ? g.analyses : { ...g.analyses, [c.analysisId]: c.sha256 },
      };
      next = { ...next, rule6: { ...next.rule6, [c.user]: grants } };
    } else {
      const byRuleset = own(next.livehunt, c.user) ?? {};
      const byMonth = own(byRuleset, c.ruleset) ?? {};
      const rules = Math.max(own(byMonth, c.month) ?? 0, c.rules);
      next = {
        ...next,
        livehunt: { ...next.livehunt, [c.user]: { ...byRuleset, [c.ruleset]: { ...byMonth, [c.month]: rules } } },
      };
    }
  }
  return next;
}
