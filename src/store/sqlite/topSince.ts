import type { DayReads } from './DayReads.js';
import type { Pivots } from '../../normalize/index.js';
import { compareText, type PivotSummary } from '../HuntReader.js';
import { GROUP_COLUMNS, mergeGroups, summarize, type Group } from './huntSql.js';
import type { Partition, StoredRow } from './partitionSchema.js';
import { pivotKeysOf, type PivotValueKind } from './PivotRow.js';

/**
 * A `top … since` window of at most one behaviour in this many of the store is read from its
 * behaviours (their documents' pivots, then one probe of the pivots key per row) instead of from
 * every row of the kind. Measured on 1,000,000 behaviours: the scan takes 130-290 ms whatever the
 * window, the window ~25-40 µs per behaviour in it (5,671 behaviours: 129 against 137 ms for
 * behash, 213 against 269 ms for dropped_sha256); both grow with what they read, so the share
 * holds at other sizes.
 */
export const WINDOW_SHARE = 200;

/**
 * The `limit` values of `kind` carried by the most behaviours analysed at or after `since`, with
 * their summaries over those behaviours only. Both ways to find them give the same answer, as
 * every pivot row carries its behaviour's date and the rows of a behaviour are those of its stored
 * document's pivots, in its partition (SqliteSink). `windowBehaviours` overrides the store's share
 * (a test seam).
 */
export function topSince(days: DayReads, kind: PivotValueKind, since: number, limit: number, windowBehaviours?: number): PivotSummary[] {
  const window = windowBehaviours ?? Math.floor(days.stored() / WINDOW_SHARE);
  // the window's behaviours, counted in each day's date index up to one more than the share
  let seen = 0;
  for (const p of reaching(days, since)) {
    const inDay = days.stmt(
      p,
      (q) => `SELECT count(*) FROM (SELECT 1 FROM ${q.behaviours} INDEXED BY ${q.index.byDate} WHERE analysis_date >= ? LIMIT ?)`,
    );
    seen += inDay.pluck().get(since, window + 1 - seen) as number;
    if (seen > window) break;
  }
  return seen <= window ? fromBehaviours(days, kind, since, limit) : fromRows(days, kind, since, limit);
}

/**
 * One pass over the kind's rows (every day's, through the view), keeping those of the window
 * (their copy of the date), grouped for every value at once: the ranking and the summaries come
 * from it; the distinct files of the values ranked take a second pass. The cost follows the
 * kind's rows, not the window's: a behaviour's own rows have no index by id (see partitionSchema).
 */
function fromRows(days: DayReads, kind: PivotValueKind, since: number, limit: number): PivotSummary[] {
  const groups = mergeGroups(
    reaching(days, since).flatMap(
      (p) =>
        days
          .stmt(
            p,
            (q) => `SELECT value, ${GROUP_COLUMNS} FROM ${q.pivots} INDEXED BY ${q.index.groups}
              WHERE kind = @kind AND analysis_date >= @since GROUP BY value, sandbox_name, verdicts`,
          )
          .all({ since, kind }) as Group[],
    ),
  );
  const values = ranked(groups, limit);
  if (values.length === 0) return [];
  return summarize(kind, values, groups, days.files(kind, values, since));
}

/** The days holding a behaviour analysed at or after `since` (their latest analysis is). */
function reaching(days: DayReads, since: number): Partition[] {
  return days.parts.list().filter((p) => (days.newest(p) ?? -Infinity) >= since);
}

/**
 * The window's behaviours (through each day's date index), the rows their documents' pivots name
 * for the kind, each confirmed by a probe of the day's key, grouped as fromRows groups them.
 */
function fromBehaviours(days: DayReads, kind: PivotValueKind, since: number, limit: number): PivotSummary[] {
  const groups: Group[] = [];
  const files = new Map<string, Set<string>>();
  for (const p of reaching(days, since)) {
    const docs = days
      .stmt(
        p,
        (q) =>
          `SELECT d.id AS id, json_extract(d.doc, '$.pivots') AS pivots, d.sandbox_name AS sandbox_name, d.verdicts AS verdicts
            FROM ${q.behaviours} d INDEXED BY ${q.index.byDate} WHERE d.analysis_date >= ?`,
      )
      .all(since) as (StoredRow & { id: string })[];
    // each behaviour's rows of the kind, confirmed by a probe of the day's key (copies of its date included)
    for (const doc of docs) {
      if (typeof doc.pivots !== 'string') continue;
      const keys = pivotKeysOf(JSON.parse(doc.pivots) as Pivots).filter((k) => k.kind === kind);
      for (const r of days.rowsIn(p, [doc], keys)) {
        if (r.date === null || r.date < since) continue;
        groups.push({ value: r.value, name: doc.sandbox_name, verdicts: doc.verdicts, n: 1, first: r.date, last: r.date });
        const set = files.get(r.value) ?? new Set<string>();
        set.add(r.id.slice(0, 64));
        files.set(r.value, set);
      }
    }
  }
  const merged = mergeGroups(groups);
  const values = ranked(merged, limit);
  if (values.length === 0) return [];
  return summarize(kind, values, merged, new Map(values.map((v) => [v, files.get(v)?.size ?? 0])));
}

/** The `limit` values with the most behaviours in `groups`, ties by value. */
function ranked(groups: readonly Group[], limit: number): string[] {
  const totals = new Map<string, number>();
  for (const g of groups) totals.set(g.value, (totals.get(g.value) ?? 0) + g.n);
  return [...totals.entries()]
    .sort(([a, x], [b, y]) => y - x || compareText(a, b))
    .slice(0, limit)
    .map(([v]) => v);
}
