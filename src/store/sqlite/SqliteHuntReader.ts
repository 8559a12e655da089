import type { Database } from 'better-sqlite3';
import type { BehaviourDoc, Pivots } from '../../normalize/index.js';
import { pivotKeysOf, type PivotValueKind as ValueKind } from './PivotRow.js';
import {
  HUNT_LIMITS,
  boundedInt,
  byKindThenValue,
  compareText,
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
import {
  BY_DATE,
  GROUP_COLUMNS,
  IN_VALUES,
  PIVOTS_KEY,
  ROWS_OF,
  rowsOfParams,
  storedBehaviours,
  summarize,
  type Group,
} from './huntSql.js';
import { topSince } from './topSince.js';

type LineRow = Omit<BehaviourLine, 'verdicts'> & { verdicts: string };

/** A behaviour sharing values with another, ranked by how many, then newest first, then by id. */
interface Candidate {
  id: string;
  shared: number;
  date: number | null;
}

function byRank(a: Candidate, b: Candidate): number {
  if (a.shared !== b.shared) return b.shared - a.shared;
  // SQLite's `ORDER BY date DESC`: NULL (no analysis date) last
  if (a.date !== b.date) return a.date === null ? 1 : b.date === null ? -1 : b.date - a.date;
  return compareText(a.id, b.id);
}

/**
 * A value held by more behaviours than this is not grouped by `related`: the behaviours sharing
 * it and nothing else are found newest first instead (they can only rank last, with one value).
 */
const RELATED_SPLIT_ROWS = 10_000;

/**
 * The hunting reads of the embedded store, answered by SQL over the pivots table, whose rows
 * carry copies of their behaviour's date, sandbox and verdict list (see SqliteSink). A value's
 * summary is one range of the pivots key grouped by sandbox and verdict list, and its distinct
 * files counted on the same range (a canonical id starts with its file's SHA-256): no join. Only
 * `fileRollup` reads documents: the few reports of one file.
 */
export class SqliteHuntReader implements HuntReader {
  /**
   * `windowBehaviours`: up to how many behaviours in a `top … since` window are read from the
   * behaviours rather than from all of the kind's rows; by default a share of the store (see
   * topSince). A test seam, to check that both ways answer the same.
   */
  constructor(
    private readonly db: Database,
    private readonly windowBehaviours?: number,
  ) {}

  /** One summary per value, in `values` order. */
  private summaries(kind: PivotKind, values: readonly string[]): PivotSummary[] {
    const args = { kind, values: JSON.stringify(values) };
    if (kind === 'sha256') {
      // a file's few reports, through the sha256 index
      const groups = this.db
        .prepare(
          `SELECT sha256 AS value, ${GROUP_COLUMNS} FROM behaviours WHERE sha256 ${IN_VALUES} GROUP BY sha256, sandbox_name, verdicts`,
        )
        .all(args) as Group[];
      return summarize(kind, values, groups, new Map(groups.map((g) => [g.value, 1])));
    }
    const range = `WHERE kind = @kind AND value ${IN_VALUES}`;
    const groups = this.db
      .prepare(`SELECT value, ${GROUP_COLUMNS} FROM pivots INDEXED BY pivots_groups ${range} GROUP BY value, sandbox_name, verdicts`)
      .all(args) as Group[];
    // in key order a value's ids (and so their files) come sorted: the distinct count is 3x
    // cheaper than over the groups index, where they do not
    const files = this.db
      .prepare(`SELECT value, count(DISTINCT substr(id, 1, 64)) AS n FROM pivots INDEXED BY ${PIVOTS_KEY} ${range} GROUP BY value`)
      .all(args) as {
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

  /**
   * Ids of the behaviours carrying a value that `n` behaviours carry, newest first (then by id),
   * `limit` from `offset`. A frequent value's page is found sooner by walking all behaviours
   * newest first and keeping those carrying it (about (offset + limit) * total / n of them) than
   * by sorting its n rows; a rare value's rows are few, so they are sorted. The span of the
   * rowids stands for the total without counting (storedBehaviours).
   */
  private newestIds(kind: PivotKind, value: string, n: number, limit: number, offset: number): string[] {
    const total = storedBehaviours(this.db);
    const byDate = kind !== 'sha256' && ((offset + limit) * total) / n < n / 4;
    const args = { kind, value, limit, offset };
    const order = 'ORDER BY analysis_date DESC, id LIMIT @limit OFFSET @offset';
    const sql = byDate
      ? `SELECT d.id AS id FROM ${BY_DATE}
         WHERE EXISTS (SELECT 1 FROM pivots p WHERE p.kind = @kind AND p.value = @value AND p.id = d.id) ${order}`
      : kind === 'sha256'
        ? `SELECT id FROM behaviours WHERE sha256 = @value ${order}`
        : `SELECT id FROM pivots WHERE kind = @kind AND value = @value ${order}`;
    return this.db.prepare(sql).pluck().all(args) as string[];
  }

  async pivotStats(kind: PivotKind, value: string, page?: { limit?: number; offset?: number }): Promise<PivotStats> {
    const key = pivotKey(value);
    const { limit, offset } = pageOf(page);
    const [summary] = this.summaries(kind, [key]) as [PivotSummary];
    const n = summary.behaviours;
    if (n === 0 || limit === 0 || offset >= n) return { ...summary, newest: [], offset, limit };
    return { ...summary, newest: this.lines(this.newestIds(kind, key, n, limit, offset)), offset, limit };
  }

  async top(kind: ValueKind, opts: { since?: number; limit?: number } = {}): Promise<PivotSummary[]> {
    const limit = boundedInt(opts.limit, HUNT_LIMITS.top.default, HUNT_LIMITS.top.max);
    if (limit === 0) return [];
    const since = typeof opts.since === 'number' && Number.isFinite(opts.since) ? opts.since : null;
    if (since === null) {
      // the kind's range of the pivots key alone, then the summaries of the values it ranks first
      const ranked = this.db
        .prepare('SELECT value FROM pivots WHERE kind = ? GROUP BY value ORDER BY count(*) DESC, value LIMIT ?')
        .pluck()
        .all(kind, limit) as string[];
      return this.summaries(kind, ranked);
    }
    return topSince(this.db, kind, since, limit, this.windowBehaviours);
  }

  async related(id: string, opts: { limit?: number } = {}): Promise<RelatedBehaviours | null> {
    if (!this.db.prepare('SELECT 1 FROM behaviours WHERE id = ?').get(id)) return null;
    const limit = boundedInt(opts.limit, HUNT_LIMITS.related.default, HUNT_LIMITS.related.max);
    const own = this.ownValues(id).sort(byKindThenValue);
    const count = this.db.prepare('SELECT count(*) AS n FROM pivots WHERE kind = ? AND value = ?').pluck();
    const values = own.map((v) => ({ ...v, others: (count.get(v.kind, v.value) as number) - 1 }));
    if (own.length === 0 || limit === 0) return { id, values, related: [] };
    const ranked = this.rankShared(id, values, limit);
    const theirs = new Map<string, { kind: ValueKind; value: string }[]>();
    const shared = this.rowsOf(
      ranked.map((r) => r.id),
      own,
    );
    for (const p of shared) {
      const list = theirs.get(p.id) ?? [];
      list.push({ kind: p.kind, value: p.value });
      theirs.set(p.id, list);
    }
    const related = this.lines(ranked.map((r) => r.id)).map((l) => ({ ...l, shared: (theirs.get(l.id) ?? []).sort(byKindThenValue) }));
    return { id, values, related };
  }

  /**
   * The `limit` other behaviours sharing most of `values` with `id`, ranked (byRank). The pivot
   * rows of the values are grouped by id, except those of a value held by very many behaviours
   * (RELATED_SPLIT_ROWS): a behaviour carrying it gets one more shared value by a probe of its
   * key, and those carrying it alone (which can only rank last, sharing one) come from its newest
   * behaviours. Same answer as grouping every row, at the cost of the rarer values' rows (none
   * when it is the behaviour's only value).
   */
  private rankShared(id: string, values: readonly { kind: ValueKind; value: string; others: number }[], limit: number): Candidate[] {
    const hot = values.reduce((a, b) => (b.others > a.others ? b : a));
    const split = hot.others + 1 > RELATED_SPLIT_ROWS;
    const grouped = split ? values.filter((v) => v !== hot) : values;
    const args: Record<string, unknown> = { id, limit, hk: hot.kind, hv: hot.value };
    grouped.forEach((v, i) => Object.assign(args, { [`k${i}`]: v.kind, [`v${i}`]: v.value }));
    const ranges = grouped.map((_, i) => `SELECT id, analysis_date FROM pivots WHERE kind = @k${i} AND value = @v${i}`).join(' UNION ALL ');
    const bonus = split ? '+ EXISTS (SELECT 1 FROM pivots h WHERE h.kind = @hk AND h.value = @hv AND h.id = s.id)' : '';
    const ranked =
      grouped.length === 0
        ? []
        : (this.db
            .prepare(
              `WITH s AS (SELECT id, count(*) AS shared, max(analysis_date) AS date FROM (${ranges}) WHERE id <> @id GROUP BY id)
               SELECT id, shared ${bonus} AS shared, date FROM s ORDER BY 2 DESC, date DESC, id LIMIT @limit`,
            )
            .all(args) as Candidate[]);
    if (!split || (ranked.length === limit && (ranked[limit - 1] as Candidate).shared > 1)) return ranked;
    // Not enough behaviours share two values or more: the rest share one. Those carrying the hot
    // value and nothing else of this behaviour compete with the grouped ones sharing one.
    const seen = new Set(ranked.map((r) => r.id));
    const newest = this.newestIds(hot.kind, hot.value, hot.others + 1, limit + 1, 0).filter((other) => other !== id && !seen.has(other));
    // how many of this behaviour's values each carries (the hot one at least), with its date
    const fill = (
      this.db
        .prepare(`SELECT p.id AS id, count(*) AS shared, max(p.analysis_date) AS date FROM ${ROWS_OF} GROUP BY p.id`)
        .all(rowsOfParams(newest, values)) as Candidate[]
    ).filter((c) => c.shared === 1);
    return [...ranked, ...fill].sort(byRank).slice(0, limit);
  }

  /**
   * The values a behaviour has pivot rows for: its stored document's pivots (what the sink wrote
   * rows from), each confirmed by a probe of the key.
   */
  private ownValues(id: string): { kind: ValueKind; value: string }[] {
    const pivots = this.db.prepare("SELECT json_extract(doc, '$.pivots') FROM behaviours WHERE id = ?").pluck().get(id) as
      string | null | undefined;
    if (typeof pivots !== 'string') return [];
    return this.rowsOf([id], pivotKeysOf(JSON.parse(pivots) as Pivots)).map(({ kind, value }) => ({ kind, value }));
  }

  /** The pivot rows of some behaviours among some values: one probe of the key per pair. */
  private rowsOf(
    ids: readonly string[],
    values: readonly { kind: ValueKind; value: string }[],
  ): { id: string; kind: ValueKind; value: string }[] {
    if (ids.length === 0 || values.length === 0) return [];
    return this.db.prepare(`SELECT p.id AS id, p.kind AS kind, p.value AS value FROM ${ROWS_OF}`).all(rowsOfParams(ids, values)) as {
      id: string;
      kind: ValueKind;
      value: string;
    }[];
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
