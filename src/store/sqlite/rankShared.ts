import { byNewest, type DayReads, type Owner } from './DayReads.js';
import type { PivotValueKind } from './PivotRow.js';

/** A behaviour sharing values with another, ranked by how many, then newest first, then by id. */
export interface Candidate extends Owner {
  shared: number;
  date: number | null;
}

/** A behaviour carrying a value, with its analysis date (newest first). */
export type NewestRow = Owner & { date: number | null };

function byRank(a: Candidate, b: Candidate): number {
  return b.shared - a.shared || byNewest(a, b);
}

/** The newest `limit` behaviours carrying a value that `n` behaviours carry (SqliteHuntReader). */
export type NewestRows = (kind: PivotValueKind, value: string, n: number, limit: number) => NewestRow[];

/**
 * A value held by more behaviours than this is not grouped by `related`: the behaviours sharing
 * it and nothing else are found newest first instead (they can only rank last, with one value).
 */
const RELATED_SPLIT_ROWS = 10_000;

/**
 * The `limit` other behaviours sharing most of `values` with `id`, ranked (byRank). The pivot
 * rows of the values are grouped by id, except those of a value held by very many behaviours
 * (RELATED_SPLIT_ROWS): a behaviour carrying it gets one more shared value by a probe of its
 * key, and those carrying it alone (which can only rank last, sharing one) come from its newest
 * behaviours. Same answer as grouping every row, at the cost of the rarer values' rows (none
 * when it is the behaviour's only value).
 */
export function rankShared(
  days: DayReads,
  id: string,
  values: readonly { kind: PivotValueKind; value: string; others: number }[],
  limit: number,
  newestRows: NewestRows,
): Candidate[] {
  const hot = values.reduce((a, b) => (b.others > a.others ? b : a));
  const split = hot.others + 1 > RELATED_SPLIT_ROWS;
  const grouped = split ? values.filter((v) => v !== hot) : values;
  // a behaviour's rows are all in its day: each day's candidates are grouped there
  let ranked: Candidate[] = [];
  for (const p of days.parts.list()) {
    const byId = new Map<string, Candidate>();
    const rowsOf = days
      .stmt(p, (q) => `SELECT id, analysis_date, sandbox_name, verdicts FROM ${q.pivots} WHERE kind = ? AND value = ?`)
      .raw();
    for (const v of grouped) {
      for (const [other, date, sandbox, verdicts] of rowsOf.all(v.kind, v.value) as [string, number | null, string, string][]) {
        if (other === id) continue;
        const c = byId.get(other);
        if (!c) byId.set(other, { id: other, shared: 1, date, sandbox_name: sandbox, verdicts });
        else c.shared += 1;
      }
    }
    if (byId.size === 0) continue;
    // one more shared value for those carrying the hot one: a probe of its key per candidate
    if (split) {
      for (const r of days.rowsIn(p, [...byId.values()], [hot])) (byId.get(r.id) as Candidate).shared += 1;
    }
    ranked = [...ranked, ...byId.values()].sort(byRank).slice(0, limit);
  }
  if (!split || (ranked.length === limit && (ranked[limit - 1] as Candidate).shared > 1)) return ranked;
  // Not enough behaviours share two values or more: the rest share one. Those carrying the hot
  // value and nothing else of this behaviour compete with the grouped ones sharing one.
  const seen = new Set(ranked.map((r) => r.id));
  const newest = newestRows(hot.kind, hot.value, hot.others + 1, limit + 1).filter((other) => other.id !== id && !seen.has(other.id));
  const owners = new Map(newest.map((o) => [o.id, o]));
  // how many of this behaviour's values each carries (the hot one at least), with its date
  const tally = new Map<string, Candidate>();
  for (const r of days.rowsOf(newest, values)) {
    const c = tally.get(r.id) ?? { ...(owners.get(r.id) as Owner), shared: 0, date: r.date };
    c.shared += 1;
    tally.set(r.id, c);
  }
  const fill = [...tally.values()].filter((c) => c.shared === 1);
  return [...ranked, ...fill].sort(byRank).slice(0, limit);
}
