import type { Database } from 'better-sqlite3';
import type { Pivots } from '../../normalize/index.js';
import { compareText, type PivotSummary } from '../HuntReader.js';
import { BY_DATE, GROUP_COLUMNS, IN_VALUES, PIVOTS_KEY, storedBehaviours, summarize, type Group } from './huntSql.js';
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
 * document's pivots (SqliteSink). `windowBehaviours` overrides the store's share (a test seam).
 */
export function topSince(db: Database, kind: PivotValueKind, since: number, limit: number, windowBehaviours?: number): PivotSummary[] {
  windowBehaviours ??= Math.floor(storedBehaviours(db) / WINDOW_SHARE);
  const inWindow = db.prepare(`SELECT count(*) FROM (SELECT 1 FROM ${BY_DATE} WHERE analysis_date >= ? LIMIT ?)`).pluck();
  const few = (inWindow.get(since, windowBehaviours + 1) as number) <= windowBehaviours;
  return few ? fromBehaviours(db, kind, since, limit) : fromRows(db, kind, since, limit);
}

/**
 * One pass over the kind's rows in pivots_groups order, keeping those of the window (their copy
 * of the date), grouped for every value at once: the ranking and the summaries come from it; the
 * distinct files of the values ranked take a second pass, on the key. The cost follows the kind's
 * rows, not the window's: a behaviour's own rows have no index by id (see SqliteSink).
 */
function fromRows(db: Database, kind: PivotValueKind, since: number, limit: number): PivotSummary[] {
  const groups = db
    .prepare(
      `SELECT value, ${GROUP_COLUMNS} FROM pivots INDEXED BY pivots_groups
       WHERE kind = @kind AND analysis_date >= @since GROUP BY value, sandbox_name, verdicts`,
    )
    .all({ since, kind }) as Group[];
  const values = ranked(groups, limit);
  if (values.length === 0) return [];
  const files = db
    .prepare(
      `SELECT value, count(DISTINCT substr(id, 1, 64)) AS n FROM pivots INDEXED BY ${PIVOTS_KEY}
       WHERE kind = @kind AND value ${IN_VALUES} AND analysis_date >= @since GROUP BY value`,
    )
    .all({ since, kind, values: JSON.stringify(values) }) as { value: string; n: number }[];
  return summarize(kind, values, groups, new Map(files.map((r) => [r.value, r.n])));
}

/**
 * The window's behaviours (through behaviours_by_date), the rows their documents' pivots name for
 * the kind, each confirmed by a probe of the key and grouped as fromRows groups them.
 */
function fromBehaviours(db: Database, kind: PivotValueKind, since: number, limit: number): PivotSummary[] {
  const docs = db
    .prepare(`SELECT d.id AS id, json_extract(d.doc, '$.pivots') AS pivots FROM ${BY_DATE} WHERE d.analysis_date >= ?`)
    .all(since) as { id: string; pivots: string | null }[];
  // the kind's rows to probe, as [value, id] pairs
  const pairs: [string, string][] = [];
  for (const { id, pivots } of docs) {
    if (typeof pivots !== 'string') continue;
    for (const k of pivotKeysOf(JSON.parse(pivots) as Pivots)) if (k.kind === kind) pairs.push([k.value, id]);
  }
  if (pairs.length === 0) return [];
  // p.value and p.id, not value and id: json_each has columns of those names
  const rows = `json_each(@pairs) r CROSS JOIN pivots p
    WHERE p.kind = @kind AND p.value = json_extract(r.value, '$[0]') AND p.id = json_extract(r.value, '$[1]') AND analysis_date >= @since`;
  const groups = db
    .prepare(`SELECT p.value AS value, ${GROUP_COLUMNS} FROM ${rows} GROUP BY p.value, sandbox_name, verdicts`)
    .all({ kind, pairs: JSON.stringify(pairs), since }) as Group[];
  const values = ranked(groups, limit);
  if (values.length === 0) return [];
  const wanted = new Set(values);
  const files = db
    .prepare(`SELECT p.value AS value, count(DISTINCT substr(p.id, 1, 64)) AS n FROM ${rows} GROUP BY p.value`)
    .all({ kind, pairs: JSON.stringify(pairs.filter(([value]) => wanted.has(value))), since }) as { value: string; n: number }[];
  return summarize(kind, values, groups, new Map(files.map((r) => [r.value, r.n])));
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
