import type { Database } from 'better-sqlite3';
import type { BehaviourDoc } from '../../normalize/index.js';
import {
  HUNT_LIMITS,
  boundedInt,
  byKindThenValue,
  compareText,
  nameCounts,
  pageOf,
  type BehaviourLine,
  type FileRollup,
  type HuntReader,
  type PivotStats,
  type PivotSummary,
  type RelatedBehaviours,
} from '../HuntReader.js';
import { fileHashKind, rollupFile } from '../rollupFile.js';
import { pivotKey, type PivotKind } from '../Sink.js';

type ValueKind = Exclude<PivotKind, 'sha256'>;
type LineRow = Omit<BehaviourLine, 'verdicts'> & { verdicts: string };

// The covering index of the hunting columns, by id: the planner would rather take the unique id
// index and read every row's page of the table, documents included (15x slower on a frequent value).
const HUNT = 'behaviours b INDEXED BY behaviours_hunt';
const IN_VALUES = 'IN (SELECT value FROM json_each(@values))';

/**
 * The behaviours carrying one of a set of values of a kind, as `(value, id)` rows: a range of the
 * pivots primary key per value (or of the sha256 index). `@values` is a JSON array of lookup keys.
 */
function matched(kind: PivotKind): string {
  return kind === 'sha256'
    ? `SELECT sha256 AS value, id FROM behaviours WHERE sha256 ${IN_VALUES}`
    : `SELECT value, id FROM pivots WHERE kind = @kind AND value ${IN_VALUES}`;
}

/** Behaviours of a value with one sandbox and one verdict list (as stored), and their dates. */
interface Group {
  value: string;
  name: string;
  verdicts: string;
  n: number;
  first: number | null;
  last: number | null;
}

const GROUP_COLUMNS = `b.sandbox_name AS name, b.verdicts AS verdicts, count(*) AS n,
  min(b.analysis_date) AS first, max(b.analysis_date) AS last`;

/** One summary per value (zeros when nothing matches), in `values` order, from its groups and distinct files. */
function summarize(
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

/**
 * The hunting reads of the embedded store, answered by SQL over the pivots table and the hunting
 * columns of `behaviours` (see SqliteSink's indexes). Each summary is two passes over a value's
 * rows: one grouped by sandbox and verdict list through the covering `behaviours_hunt` index,
 * one counting distinct files on the pivot rows alone (a canonical id starts with its file's
 * SHA-256). Only `fileRollup` reads documents: the few reports of one file.
 */
export class SqliteHuntReader implements HuntReader {
  constructor(private readonly db: Database) {}

  /**
   * One summary per value, in `values` order: the values' rows grouped by sandbox and verdict
   * list through the covering index (a few dozen lists, split into verdicts by `summarize`), and
   * their distinct files counted on the pivot rows alone.
   */
  private summaries(kind: PivotKind, values: readonly string[]): PivotSummary[] {
    const args = { kind, values: JSON.stringify(values) };
    const cte = `WITH m AS (${matched(kind)})`;
    const groups = this.db
      .prepare(
        `${cte} SELECT m.value AS value, ${GROUP_COLUMNS} FROM m JOIN ${HUNT} ON b.id = m.id GROUP BY m.value, b.sandbox_name, b.verdicts`,
      )
      .all(args) as Group[];
    const files = this.db.prepare(`${cte} SELECT value, count(DISTINCT substr(id, 1, 64)) AS n FROM m GROUP BY value`).all(args) as {
      value: string;
      n: number;
    }[];
    return summarize(kind, values, groups, new Map(files.map((r) => [r.value, r.n])));
  }

  /** The lines of some behaviours, in the order of `ids`. */
  private lines(ids: readonly string[]): BehaviourLine[] {
    if (ids.length === 0) return [];
    const rows = this.db
      .prepare('SELECT id, sha256, sandbox_name, verdicts, analysis_date FROM behaviours WHERE id IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify(ids)) as LineRow[];
    const byId = new Map(rows.map((r) => [r.id, { ...r, verdicts: JSON.parse(r.verdicts) as string[] }]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async pivotStats(kind: PivotKind, value: string, page?: { limit?: number; offset?: number }): Promise<PivotStats> {
    const key = pivotKey(value);
    const { limit, offset } = pageOf(page);
    const [summary] = this.summaries(kind, [key]) as [PivotSummary];
    const n = summary.behaviours;
    if (n === 0 || limit === 0 || offset >= n) return { ...summary, newest: [], offset, limit };
    // A frequent value's newest page is found sooner by walking all behaviours newest first and
    // keeping those carrying it (about (offset + limit) * total / n of them) than by sorting its
    // n rows; a rare value's rows are few, so they are sorted. max(rowid) bounds the total
    // without counting (behaviours are never deleted).
    const total = (this.db.prepare('SELECT max(rowid) AS n FROM behaviours').get() as { n: number | null }).n ?? 0;
    const byDate = kind !== 'sha256' && ((offset + limit) * total) / n < n / 4;
    const args = { kind, value: key, values: JSON.stringify([key]), limit, offset };
    const ids = (
      byDate
        ? this.db
            .prepare(
              `SELECT d.id AS id FROM behaviours d INDEXED BY behaviours_analysis_date
               WHERE EXISTS (SELECT 1 FROM pivots p WHERE p.kind = @kind AND p.value = @value AND p.id = d.id)
               ORDER BY d.analysis_date DESC, d.id LIMIT @limit OFFSET @offset`,
            )
            .all(args)
        : this.db
            .prepare(
              `WITH m AS (${matched(kind)}) SELECT b.id AS id FROM m JOIN ${HUNT} ON b.id = m.id
               ORDER BY b.analysis_date DESC, b.id LIMIT @limit OFFSET @offset`,
            )
            .all(args)
    ) as { id: string }[];
    return { ...summary, newest: this.lines(ids.map((r) => r.id)), offset, limit };
  }

  async top(kind: ValueKind, opts: { since?: number; limit?: number } = {}): Promise<PivotSummary[]> {
    const limit = boundedInt(opts.limit, HUNT_LIMITS.top.default, HUNT_LIMITS.top.max);
    if (limit === 0) return [];
    const since = typeof opts.since === 'number' && Number.isFinite(opts.since) ? opts.since : null;
    if (since === null) {
      // the kind's range of the pivots key alone, then the summaries of the values it ranks first
      const ranked = this.db
        .prepare('SELECT value FROM pivots WHERE kind = ? GROUP BY value ORDER BY count(*) DESC, value LIMIT ?')
        .all(kind, limit) as { value: string }[];
      return this.summaries(
        kind,
        ranked.map((r) => r.value),
      );
    }
    // Since a date: the behaviours analysed since then (their index, newest first), each joined
    // once to its hunting columns and to its pivot rows of the kind (pivots_by_id), grouped for
    // every value at once: the ranking and the summaries come from that one pass; the distinct
    // files of the values ranked take a second.
    const window = 'behaviours d INDEXED BY behaviours_analysis_date';
    const groups = this.db
      .prepare(
        `SELECT p.value AS value, ${GROUP_COLUMNS} FROM ${window} CROSS JOIN ${HUNT} CROSS JOIN pivots p
         WHERE d.analysis_date >= @since AND b.id = d.id AND p.id = d.id AND p.kind = @kind
         GROUP BY p.value, b.sandbox_name, b.verdicts`,
      )
      .all({ since, kind }) as Group[];
    const totals = new Map<string, number>();
    for (const g of groups) totals.set(g.value, (totals.get(g.value) ?? 0) + g.n);
    const values = [...totals.entries()]
      .sort(([a, x], [b, y]) => y - x || compareText(a, b))
      .slice(0, limit)
      .map(([v]) => v);
    if (values.length === 0) return [];
    // `+p.value`: probe pivots_by_id once per behaviour and filter the values, not once per value
    const files = this.db
      .prepare(
        `SELECT p.value AS value, count(DISTINCT substr(p.id, 1, 64)) AS n FROM ${window} CROSS JOIN pivots p
         WHERE d.analysis_date >= @since AND p.id = d.id AND p.kind = @kind AND +p.value ${IN_VALUES} GROUP BY p.value`,
      )
      .all({ since, kind, values: JSON.stringify(values) }) as { value: string; n: number }[];
    return summarize(kind, values, groups, new Map(files.map((r) => [r.value, r.n])));
  }

  async related(id: string, opts: { limit?: number } = {}): Promise<RelatedBehaviours | null> {
    if (!this.db.prepare('SELECT 1 FROM behaviours WHERE id = ?').get(id)) return null;
    const limit = boundedInt(opts.limit, HUNT_LIMITS.related.default, HUNT_LIMITS.related.max);
    const own = (this.db.prepare('SELECT kind, value FROM pivots WHERE id = ?').all(id) as { kind: ValueKind; value: string }[]).sort(
      byKindThenValue,
    );
    const count = this.db.prepare('SELECT count(*) AS n FROM pivots WHERE kind = ? AND value = ?');
    const values = own.map((v) => ({ ...v, others: (count.get(v.kind, v.value) as { n: number }).n - 1 }));
    if (own.length === 0 || limit === 0) return { id, values, related: [] };
    // One GROUP BY id over the pivot rows of the behaviour's values gives how many each other
    // behaviour shares. Only those sharing at least as many as the limit-th one can rank, so
    // only they are joined for their dates (the tie-break), not every behaviour sharing one value.
    const ranges = own.map((_, i) => `SELECT id FROM pivots WHERE kind = @k${i} AND value = @v${i}`).join(' UNION ALL ');
    const args: Record<string, unknown> = { id, limit };
    own.forEach((v, i) => Object.assign(args, { [`k${i}`]: v.kind, [`v${i}`]: v.value }));
    const ranked = this.db
      .prepare(
        `WITH s AS MATERIALIZED (SELECT id, count(*) AS shared FROM (${ranges}) WHERE id <> @id GROUP BY id),
           k AS (SELECT shared FROM s ORDER BY shared DESC LIMIT 1 OFFSET @limit - 1)
         SELECT s.id AS id FROM s JOIN ${HUNT} ON b.id = s.id
         WHERE s.shared >= coalesce((SELECT shared FROM k), 0)
         ORDER BY s.shared DESC, b.analysis_date DESC, b.id LIMIT @limit`,
      )
      .all(args) as { id: string }[];
    const mine = new Set(own.map((v) => `${v.kind}\u0000${v.value}`));
    const theirs = new Map<string, { kind: ValueKind; value: string }[]>();
    const pivotsOf = this.db.prepare('SELECT id, kind, value FROM pivots WHERE id IN (SELECT value FROM json_each(?))');
    for (const p of pivotsOf.all(JSON.stringify(ranked.map((r) => r.id))) as { id: string; kind: ValueKind; value: string }[]) {
      if (!mine.has(`${p.kind}\u0000${p.value}`)) continue;
      const list = theirs.get(p.id) ?? [];
      list.push({ kind: p.kind, value: p.value });
      theirs.set(p.id, list);
    }
    const related = this.lines(ranked.map((r) => r.id)).map((l) => ({ ...l, shared: (theirs.get(l.id) ?? []).sort(byKindThenValue) }));
    return { id, values, related };
  }

  async fileRollup(hash: string): Promise<FileRollup | null> {
    const h = typeof hash === 'string' ? fileHashKind(hash) : undefined;
    if (!h) return null;
    // an MD5 or SHA-1 names its file's SHA-256 (through their indexes); the rollup then holds every
    // report of that file, those without the MD5/SHA-1 in their context included
    const sha256 =
      h.kind === 'sha256'
        ? h.value
        : (
            this.db.prepare(`SELECT sha256 FROM behaviours WHERE ${h.kind} = ? ORDER BY sha256 LIMIT 1`).get(h.value) as
              { sha256: string } | undefined
          )?.sha256;
    if (sha256 === undefined) return null;
    const docs = (
      this.db.prepare('SELECT doc FROM behaviours WHERE sha256 = ? ORDER BY id LIMIT ?').all(sha256, HUNT_LIMITS.reports) as {
        doc: string;
      }[]
    ).map((r) => JSON.parse(r.doc) as BehaviourDoc);
    return docs.length === 0 ? null : rollupFile(sha256, docs);
  }
}
