import { nameCounts, type PivotSummary } from '../HuntReader.js';
import type { PivotKind } from '../Sink.js';

/*
 * The SQL pieces the hunting reads of the SQLite store share (SqliteHuntReader, topSince), and the
 * summary they build from a value's groups of rows.
 */

/** `IN` the values of the JSON array bound as @values. */
export const IN_VALUES = 'IN (SELECT value FROM json_each(@values))';
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

/** Merges groups of the same value, sandbox and verdict list (read from several partitions). */
export function mergeGroups(groups: Iterable<Group>): Group[] {
  const byKey = new Map<string, Group>();
  for (const g of groups) {
    const key = `${g.value}\u0000${g.name}\u0000${g.verdicts}`;
    const had = byKey.get(key);
    if (!had) {
      byKey.set(key, { ...g });
      continue;
    }
    had.n += g.n;
    if (g.first !== null && (had.first === null || g.first < had.first)) had.first = g.first;
    if (g.last !== null && (had.last === null || g.last > had.last)) had.last = g.last;
  }
  return [...byKey.values()];
}
