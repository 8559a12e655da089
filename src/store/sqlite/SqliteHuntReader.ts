import type { Database } from 'better-sqlite3';
import { DayReads, byNewest } from './DayReads.js';
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
  type Timeline,
} from '../HuntReader.js';
import { fileHashKind, rollupFile } from '../rollupFile.js';
import { PIVOT_KINDS, pivotKey, type PivotKind } from '../Sink.js';
import { GROUP_COLUMNS, IN_VALUES, mergeGroups, summarize, type Group } from './huntSql.js';
import { rankShared, type NewestRow } from './rankShared.js';
import { topSince } from './topSince.js';
import { OWN_ROW } from './partitionSchema.js';

type LineRow = Omit<BehaviourLine, 'verdicts'> & { verdicts: string };

/** What a walk newest first keeps of each behaviour: the probes of its pivot rows need its sandbox and verdicts. */
const NEWEST_COLUMNS = 'id, analysis_date AS date, sandbox_name, verdicts';

/**
 * The hunting reads of the embedded store, answered by SQL over the pivot rows, which carry
 * copies of their behaviour's date, sandbox and verdict list (see SqliteSink). A value's summary
 * is its rows in every day's pivots grouped by sandbox and verdict list, and its distinct files
 * counted on the same rows (a canonical id starts with its file's SHA-256): no join. Lists in
 * date order are walked in each day and merged (DayReads). Only `fileRollup` reads documents: the
 * few reports of one file.
 */
export class SqliteHuntReader implements HuntReader {
  private readonly days: DayReads;

  /**
   * `windowBehaviours`: up to how many behaviours in a `top … since` window are read from the
   * behaviours rather than from all of the kind's rows; by default a share of the store (see
   * topSince). A test seam, to check that both ways answer the same.
   */
  constructor(
    private readonly db: Database,
    private readonly windowBehaviours?: number,
  ) {
    this.days = new DayReads(db);
  }

  /** One summary per value, in `values` order. */
  private summaries(kind: PivotKind, values: readonly string[]): PivotSummary[] {
    const args = { kind, values: JSON.stringify(values) };
    if (kind === 'sha256') {
      // a file's few reports, through each day's sha256 index
      const groups = this.db
        .prepare(
          `SELECT sha256 AS value, ${GROUP_COLUMNS} FROM behaviours WHERE sha256 ${IN_VALUES} GROUP BY sha256, sandbox_name, verdicts`,
        )
        .all(args) as Group[];
      return summarize(kind, values, groups, new Map(groups.map((g) => [g.value, 1])));
    }
    // each day's rows of the values in (sandbox, verdict list) order, grouped as read, then merged
    const groups = mergeGroups(
      this.days.parts
        .list()
        .flatMap(
          (p) =>
            this.days
              .stmt(
                p,
                (q) =>
                  `SELECT value, ${GROUP_COLUMNS} FROM ${q.pivots} INDEXED BY ${q.index.groups} WHERE kind = @kind AND value ${IN_VALUES} GROUP BY value, sandbox_name, verdicts`,
              )
              .all(args) as Group[],
        ),
    );
    return summarize(kind, values, groups, this.days.files(kind, values));
  }

  /** The lines of some behaviours, in the order of `ids`. */
  private lines(ids: readonly string[]): BehaviourLine[] {
    if (ids.length === 0) return [];
    const rows = this.days
      .byPartition(ids)
      .flatMap(
        ([p, list]) =>
          this.days
            .stmt(
              p,
              (q) =>
                `SELECT id, sha256, sandbox_name, verdicts, analysis_date FROM ${q.behaviours} WHERE id IN (SELECT value FROM json_each(?))`,
            )
            .all(JSON.stringify(list)) as LineRow[],
      );
    const byId = new Map(rows.map((r) => [r.id, { ...r, verdicts: JSON.parse(r.verdicts) as string[] }]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * The behaviours carrying a value that `n` behaviours carry, newest first (then by id),
   * `limit` from `offset`: each day's first `offset + limit`, merged. In a day, a frequent value's
   * page is found sooner by walking the day's behaviours newest first and keeping those carrying
   * it (about (offset + limit) * total / n of them) than by sorting its rows there; a rare
   * value's rows are few, so they are sorted. Spans of rowids stand for counts (DayReads.span).
   */
  private newest(kind: PivotKind, value: string, n: number, limit: number, offset: number): NewestRow[] {
    const want = offset + limit;
    const total = this.days.stored();
    const args = { kind, value, want };
    const order = 'ORDER BY analysis_date DESC, id LIMIT @want';
    const found: NewestRow[] = [];
    // the days holding the latest analyses first: once a page is full, a day whose latest is
    // older than its last line cannot add to it
    const days = this.days.parts
      .list()
      .map((p) => ({ p, newest: this.days.newest(p) }))
      .sort((a, b) => (b.newest ?? -Infinity) - (a.newest ?? -Infinity));
    for (const { p, newest } of days) {
      if (found.length >= want) {
        found.sort(byNewest);
        found.length = want;
        const last = (found[want - 1] as { date: number | null }).date;
        if (last !== null && (newest === null || newest < last)) break;
      }
      const here = total > 0 ? (n * this.days.span(p)) / total : 0;
      const byDate = kind !== 'sha256' && (want * total) / n < here / 4;
      const sql = byDate
        ? (q: typeof p) => `SELECT ${NEWEST_COLUMNS} FROM ${q.behaviours} d INDEXED BY ${q.index.byDate}
           WHERE EXISTS (SELECT 1 FROM ${q.pivots} r WHERE ${OWN_ROW('r', 'd')}) ${order}`
        : kind === 'sha256'
          ? (q: typeof p) => `SELECT ${NEWEST_COLUMNS} FROM ${q.behaviours} WHERE sha256 = @value ${order}`
          : (q: typeof p) => `SELECT ${NEWEST_COLUMNS} FROM ${q.pivots} WHERE kind = @kind AND value = @value ${order}`;
      found.push(...(this.days.stmt(p, sql).all(args) as typeof found));
    }
    return found.sort(byNewest).slice(offset, want);
  }

  async pivotStats(kind: PivotKind, value: string, page?: { limit?: number; offset?: number }): Promise<PivotStats> {
    const key = pivotKey(value);
    const { limit, offset } = pageOf(page);
    return this.days.snapshot(() => {
      const [summary] = this.summaries(kind, [key]) as [PivotSummary];
      const n = summary.behaviours;
      if (n === 0 || limit === 0 || offset >= n) return { ...summary, newest: [], offset, limit };
      const newest = this.newest(kind, key, n, limit, offset).map((r) => r.id);
      return { ...summary, newest: this.lines(newest), offset, limit };
    });
  }

  async top(kind: ValueKind, opts: { since?: number; limit?: number } = {}): Promise<PivotSummary[]> {
    const limit = boundedInt(opts.limit, HUNT_LIMITS.top.default, HUNT_LIMITS.top.max);
    if (limit === 0) return [];
    const since = typeof opts.since === 'number' && Number.isFinite(opts.since) ? opts.since : null;
    return this.days.snapshot(() => {
      if (since !== null) return topSince(this.days, kind, since, limit, this.windowBehaviours);
      // the kind's rows alone, counted in each day in key order, then the summaries of the values ranked first
      const counts = new Map<string, number>();
      for (const p of this.days.parts.list()) {
        const rows = this.days
          .stmt(p, (q) => `SELECT value, count(*) AS n FROM ${q.pivots} WHERE kind = ? GROUP BY value`)
          .raw()
          .all(kind) as [string, number][];
        for (const [v, c] of rows) counts.set(v, (counts.get(v) ?? 0) + c);
      }
      const ranked = [...counts.entries()]
        .sort(([a, x], [b, y]) => y - x || compareText(a, b))
        .slice(0, limit)
        .map(([v]) => v);
      return this.summaries(kind, ranked);
    });
  }

  async related(id: string, opts: { limit?: number } = {}): Promise<RelatedBehaviours | null> {
    const limit = boundedInt(opts.limit, HUNT_LIMITS.related.default, HUNT_LIMITS.related.max);
    return this.days.snapshot(() => {
      if (!this.days.has(id)) return null;
      const own = this.ownValues(id).sort(byKindThenValue);
      const count = (v: { kind: ValueKind; value: string }): number =>
        this.days.parts.list().reduce(
          (n, p) =>
            n +
            (this.days
              .stmt(p, (q) => `SELECT count(*) FROM ${q.pivots} WHERE kind = ? AND value = ?`)
              .pluck()
              .get(v.kind, v.value) as number),
          0,
        );
      const values = own.map((v) => ({ ...v, others: count(v) - 1 }));
      if (own.length === 0 || limit === 0) return { id, values, related: [] };
      const ranked = rankShared(this.days, id, values, limit, (kind, value, n, page) => this.newest(kind, value, n, page, 0));
      const theirs = new Map<string, { kind: ValueKind; value: string }[]>();
      const shared = this.days.rowsOf(ranked, own);
      for (const p of shared) {
        const list = theirs.get(p.id) ?? [];
        list.push({ kind: p.kind, value: p.value });
        theirs.set(p.id, list);
      }
      const related = this.lines(ranked.map((r) => r.id)).map((l) => ({ ...l, shared: (theirs.get(l.id) ?? []).sort(byKindThenValue) }));
      return { id, values, related };
    });
  }

  /**
   * The values a behaviour has pivot rows for: its stored document's pivots (what the sink wrote
   * rows from), each confirmed by a probe of the key.
   */
  private ownValues(id: string): { kind: ValueKind; value: string }[] {
    const own = this.days.owner(id);
    if (typeof own?.pivots !== 'string') return [];
    return this.days.rowsOf([own], pivotKeysOf(JSON.parse(own.pivots) as Pivots)).map(({ kind, value }) => ({ kind, value }));
  }

  async fileRollup(hash: string): Promise<FileRollup | null> {
    const h = typeof hash === 'string' ? fileHashKind(hash) : undefined;
    if (!h) return null;
    return this.days.snapshot(() => {
      // an MD5 or SHA-1 names its file's SHA-256 (through each day's index of it); the rollup then
      // holds every report of that file, those without the MD5/SHA-1 in their context included
      const sha256 =
        h.kind === 'sha256'
          ? h.value
          : (this.db.prepare(`SELECT min(sha256) FROM behaviours WHERE ${h.kind} = ?`).pluck().get(h.value) as string | null);
      if (sha256 === null) return null;
      const ids = (this.db.prepare('SELECT id FROM behaviours WHERE sha256 = ?').pluck().all(sha256) as string[])
        .sort(compareText)
        .slice(0, HUNT_LIMITS.reports);
      const docs = this.days
        .byPartition(ids)
        .flatMap(
          ([p, list]) =>
            this.days
              .stmt(p, (q) => `SELECT id, doc FROM ${q.behaviours} WHERE id IN (SELECT value FROM json_each(?))`)
              .all(JSON.stringify(list)) as { id: string; doc: string }[],
        )
        .sort((a, b) => compareText(a.id, b.id))
        .map((r) => JSON.parse(r.doc) as BehaviourDoc);
      return docs.length === 0 ? null : rollupFile(sha256, docs);
    });
  }

  async timeline(kind: PivotKind, value: string, bucketSeconds: 3600 | 86400): Promise<Timeline> {
    const key = pivotKey(value);
    return this.days.snapshot(() => {
      const counts = new Map<number, number>();
      let undated = 0;
      // each day's rows of the value (its pivot rows carry their behaviour's analysis date), bucketed in
      // SQL; the bucket is one of two integers, written into the statement (a bound number is a REAL)
      const b = bucketSeconds === 3600 ? 3600 : 86_400;
      const bucket = `analysis_date / ${b} * ${b}`;
      for (const p of this.days.parts.list()) {
        const rows = this.days
          .stmt(p, (q) =>
            kind === 'sha256'
              ? `SELECT ${bucket} AS t, count(*) AS n FROM ${q.behaviours} WHERE sha256 = @value GROUP BY t`
              : `SELECT ${bucket} AS t, count(*) AS n FROM ${q.pivots} WHERE kind = @kind AND value = @value GROUP BY t`,
          )
          .all({ kind, value: key }) as { t: number | null; n: number }[];
        for (const { t, n } of rows) {
          if (t === null) undated += n;
          else counts.set(t, (counts.get(t) ?? 0) + n);
        }
      }
      return {
        bucketSeconds,
        counts: [...counts.entries()].sort(([a], [b]) => a - b).map(([t, count]) => ({ t, count })),
        undated,
      };
    });
  }

  async valueSummaries(kind: PivotKind, values: readonly string[]): Promise<PivotSummary[]> {
    const keys = values.slice(0, HUNT_LIMITS.top.max).map(pivotKey);
    return keys.length === 0 ? [] : this.days.snapshot(() => this.summaries(kind, keys));
  }

  async cooccurring(kind: PivotKind, value: string, limit = 10): Promise<{ kind: PivotKind; value: string; behaviours: number }[]> {
    const key = pivotKey(value);
    const n = boundedInt(limit, 10, HUNT_LIMITS.top.max);
    return this.days.snapshot(() => {
      const counts = new Map<string, Map<string, number>>();
      // the value's behaviours in each day (their rows are in their own day), their documents' pivots
      for (const p of this.days.parts.list()) {
        const rows = this.days
          .stmt(p, (q) =>
            kind === 'sha256'
              ? `SELECT json_extract(doc, '$.pivots') FROM ${q.behaviours} WHERE sha256 = @value`
              : `SELECT json_extract(d.doc, '$.pivots') FROM ${q.pivots} r JOIN ${q.behaviours} d ON d.id = r.id WHERE r.kind = @kind AND r.value = @value`,
          )
          .pluck()
          .all({ kind, value: key }) as (string | null)[];
        for (const pivots of rows) {
          if (typeof pivots !== 'string') continue;
          for (const k of pivotKeysOf(JSON.parse(pivots) as Pivots)) {
            if (k.kind === kind) continue;
            const m = counts.get(k.kind) ?? new Map<string, number>();
            m.set(k.value, (m.get(k.value) ?? 0) + 1);
            counts.set(k.kind, m);
          }
        }
      }
      return ranked(counts, n);
    });
  }
}

/** The `n` most frequent values of each kind, kinds in PIVOT_KINDS order. */
function ranked(counts: Map<string, Map<string, number>>, n: number): { kind: PivotKind; value: string; behaviours: number }[] {
  return PIVOT_KINDS.flatMap((k) =>
    [...(counts.get(k) ?? new Map<string, number>()).entries()]
      .sort(([a, x], [b, y]) => y - x || compareText(a, b))
      .slice(0, n)
      .map(([value, behaviours]) => ({ kind: k, value, behaviours })),
  );
}
