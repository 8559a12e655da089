import type { Database } from 'better-sqlite3';
import { nameCounts, type PivotSummary } from '../HuntReader.js';
import type { PivotKind } from '../Sink.js';

/*
 * The SQL pieces the hunting reads of the SQLite store share (SqliteHuntReader, topSince), and the
 * summary they build from a value's groups of rows.
 */

/** `IN` the values of the JSON array bound as @values. */
export const IN_VALUES = 'IN (SELECT value FROM json_each(@values))';
// The pivots table's own key (kind, value, id): a WITHOUT ROWID table's primary key index.
export const PIVOTS_KEY = 'sqlite_autoindex_pivots_1';
// The pivot rows of the behaviours @ids (a JSON array) among the (kind, value) pairs @keys: one
// probe of the pivots key per pair, in that order (CROSS JOIN fixes it).
export const ROWS_OF = `json_each(@ids) i CROSS JOIN json_each(@keys) k CROSS JOIN pivots p
  WHERE p.kind = json_extract(k.value, '$[0]') AND p.value = json_extract(k.value, '$[1]') AND p.id = i.value`;
/** The parameters of ROWS_OF: the behaviours' ids and the (kind, value) pairs, as JSON arrays. */
export const rowsOfParams = (
  ids: readonly string[],
  values: readonly { kind: string; value: string }[],
): { ids: string; keys: string } => ({
  ids: JSON.stringify(ids),
  keys: JSON.stringify(values.map((v) => [v.kind, v.value])),
});
/**
 * About how many behaviours the store holds, without counting them: the span of their rowids.
 * Rowids grow as behaviours are written and retention removes the oldest first, so the span
 * stays close to the count. Only the hunting reads' choice of plan depends on it.
 */
export function storedBehaviours(db: Database): number {
  return (db.prepare('SELECT max(rowid) - min(rowid) + 1 FROM behaviours').pluck().get() as number | null) ?? 0;
}

// Behaviours newest first, covering their sandbox and verdicts (SqliteSink's indexes).
export const BY_DATE = 'behaviours d INDEXED BY behaviours_by_date';

/** Behaviours of a value with one sandbox and one verdict list (as stored), and their dates. */
export interface Group {
  value: string;
  name: string;
  verdicts: string;
  n: number;
  first: number | null;
  last: number | null;
}

export const GROUP_COLUMNS = `sandbox_name AS name, verdicts, count(*) AS n, min(analysis_date) AS first, max(analysis_date) AS last`;

/** One summary per value (zeros when nothing matches), in `values` order, from its groups and distinct files. */
export function summarize(
  kind: PivotKind,
  values: readonly string[],
  groups: readonly Group[],
  files: ReadonlyMap<string, number>,
): PivotSummary[] {
  return values.map((value) => {
    const sandboxes = new Map<string, number>();
    const verdicts = new Map<string, number>();
    let behaviours = 0;
    let firstSeen: number | null = null;
    let lastSeen: number | null = null;
    for (const g of groups) {
      if (g.value !== value) continue;
      behaviours += g.n;
      sandboxes.set(g.name, (sandboxes.get(g.name) ?? 0) + g.n);
      // a verdict list holds each verdict once (metaOf), so a group adds its count to each
      for (const v of JSON.parse(g.verdicts) as string[]) verdicts.set(v, (verdicts.get(v) ?? 0) + g.n);
      if (g.first !== null && (firstSeen === null || g.first < firstSeen)) firstSeen = g.first;
      if (g.last !== null && (lastSeen === null || g.last > lastSeen)) lastSeen = g.last;
    }
    return {
      kind,
      value,
      behaviours,
      files: files.get(value) ?? 0,
      sandboxes: nameCounts(sandboxes),
      verdicts: nameCounts(verdicts),
      firstSeen,
      lastSeen,
    };
  });
}
