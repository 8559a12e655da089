import type { Database, Statement } from 'better-sqlite3';
import { DEFAULT_MAX_DEPTH, type BehaviourDoc, type Pivots } from '../../normalize/index.js';
import {
  depthRejection,
  invalidDocReason,
  pivotKey,
  type ItemResult,
  type PivotKind,
  type ScanPage,
  type ScanQuery,
  type Sink,
} from '../Sink.js';
import { hasHuntFields, type SinkDoc } from '../../wire/index.js';
import { compareText } from '../HuntReader.js';
import { Partitions } from './Partitions.js';
import { byPivotKey, pivotKeysOf, type PendingPivots } from './PivotRow.js';
import { HUNT_FROM_DOC, setUpStore } from './migrateStore.js';
import { PIVOT_ROW, dayOf, type Partition, type StoredRow } from './partitionSchema.js';
import { callFailed, rejectUnlessTransient } from './sqliteErrors.js';
import { writeWhenFree } from './writeWhenFree.js';

/** A partition's statements of the index stage. */
interface DayWrites {
  part: Partition;
  upsertDoc: Statement;
  huntFromDoc: Statement;
  verdictsOf: Statement;
  stored: Statement;
  deleteDoc: Statement;
  deletePivot: Statement;
  insertPivot: Statement;
}

/**
 * The embedded sink: one SQLite file, behaviours in one table per UTC day of their
 * last_modification_date, one pivot row per (kind, value, id) beside them, so every index a
 * write changes is a day's, small and cached, whatever the store holds (see partitionSchema).
 * One live version per behaviour across days: the locator says where it is.
 */
export class SqliteSink implements Sink {
  readonly kind = 'sqlite';
  private readonly parts: Partitions;
  private readonly writes: (p: Partition) => DayWrites;

  /**
   * @param maxDepth documents nested deeper are rejected `too_deep` (feed.maxDepth).
   * @param keptAfter the retention cutoff now (Unix seconds): a document modified before it is
   * already expired and not written; absent, everything is kept.
   */
  constructor(
    private readonly db: Database,
    private readonly maxDepth = DEFAULT_MAX_DEPTH,
    private readonly keptAfter?: () => number | undefined,
  ) {
    // a read-only connection finds the schema current (openForReads checks it) and never writes
    if (!db.readonly) setUpStore(db);
    this.parts = new Partitions(db);
    this.writes = this.parts.cache((part) => {
      const t = part.behaviours;
      return {
        part,
        // the locator decided that this version wins (or rewrites the same state: replays stay idempotent)
        // CAST: JSON handed over as UTF-8 bytes is stored as TEXT, as it is, with no decoding in JS
        upsertDoc: db.prepare(`
          INSERT INTO ${t} (id, sha256, sandbox_name, analysis_date, last_modification_date, doc, indexed_at, verdicts, md5, sha1)
          VALUES (@id, @sha256, @sandbox_name, @analysis_date, @last_modification_date, CAST(@doc AS TEXT), @indexed_at, @verdicts, @md5, @sha1)
          ON CONFLICT(id) DO UPDATE SET
            sha256 = excluded.sha256, sandbox_name = excluded.sandbox_name, analysis_date = excluded.analysis_date,
            last_modification_date = excluded.last_modification_date, doc = excluded.doc, indexed_at = excluded.indexed_at,
            verdicts = excluded.verdicts, md5 = excluded.md5, sha1 = excluded.sha1`),
        huntFromDoc: db.prepare(`UPDATE ${t} SET ${HUNT_FROM_DOC} WHERE id = ?`),
        verdictsOf: db.prepare(`SELECT verdicts FROM ${t} WHERE id = ?`).pluck(),
        stored: db.prepare(`SELECT json_extract(doc, '$.pivots') AS pivots, sandbox_name, verdicts FROM ${t} WHERE id = ?`),
        deleteDoc: db.prepare(`DELETE FROM ${t} WHERE id = ?`),
        deletePivot: db.prepare(`DELETE FROM ${part.pivots} WHERE ${PIVOT_ROW}`),
        insertPivot: db.prepare(
          `INSERT OR IGNORE INTO ${part.pivots} (kind, value, id, analysis_date, sandbox_name, verdicts) VALUES (?, ?, ?, ?, ?, ?)`,
        ),
      };
    });
  }

  async upsert(docs: readonly SinkDoc[]): Promise<ItemResult[]> {
    const now = Math.floor(Date.now() / 1000);
    // the retention cutoff of this call, read once (not per document)
    const cutoff = this.keptAfter?.();
    const write = (): ItemResult[] =>
      this.parts.pinned(() => {
        const pending: PendingPivots = { rows: [], latest: new Map() };
        const results = docs.map((doc, i) => this.writeOne(doc, now, cutoff, i, pending));
        this.insertPivots(pending, results);
        this.parts.settleViews();
        return results;
      });
    try {
      // another process's write lock is waited for without blocking the event loop: a fleet's
      // index worker keeps answering /healthz and signals while a tool holds the store
      return await writeWhenFree(this.db, write);
    } catch (err) {
      this.parts.invalidate();
      return docs.map((d) => callFailed(err, d.meta.id, this.db.name));
    }
  }

  /**
   * Inserts a call's pivot rows in key order (by day, then key), after its documents: the B-tree
   * is then walked left to right once per call, instead of jumping to a random page per row and
   * re-reading the pages the cache dropped (1 GB minute, groups of 2,000: 28.6 → 12.8 GB written,
   * 26.6 → 16–21 s).
   */
  private insertPivots({ rows, latest }: PendingPivots, results: ItemResult[]): void {
    rows.sort((a, b) => a.day - b.day || byPivotKey(a, b));
    for (const r of rows) {
      // a behaviour stored twice in one call keeps only the rows of its version written last
      if (latest.get(r.id) !== r.item || results[r.item]?.status !== 'ok') continue;
      try {
        this.dayWrites(r.day).insertPivot.run(r.kind, r.value, r.id, r.date, r.sandbox, r.verdicts);
      } catch (err) {
        results[r.item] = rejectUnlessTransient(err, r.id);
      }
    }
  }

  /** The statements of a day's partition, created when missing. */
  private dayWrites(day: number): DayWrites {
    return this.writes(this.parts.ensure(day));
  }

  private writeOne(item: SinkDoc, now: number, cutoff: number | undefined, index: number, pending: PendingPivots): ItemResult {
    const doc = item.meta;
    const invalid = invalidDocReason(doc);
    if (invalid) return { id: String(doc?.id), status: 'rejected', code: 'invalid_document', reason: invalid };
    const deep = depthRejection(doc, this.maxDepth);
    if (deep) return { id: doc.id, status: 'rejected', ...deep };
    // past retention: the store would remove it at its next step, so it has already converged
    if (cutoff !== undefined && doc.last_modification_date < cutoff) return { id: doc.id, status: 'ok', stale: true, expired: true };
    const json = item.json;
    const hunt = hasHuntFields(doc);
    const verdicts = hunt ? JSON.stringify(doc.verdicts) : '[]';
    try {
      // newer wins; an equal date rewrites the same state, which keeps replays idempotent
      const where = this.parts.locate(doc.id);
      if (where && where.last_modification_date > doc.last_modification_date) return { id: doc.id, status: 'ok', stale: true };
      const day = dayOf(doc.last_modification_date);
      const to = this.dayWrites(day);
      if (where) {
        // the version this one replaces: its pivot rows go, and its row too when it lives in another day
        const from = this.parts.get(where.day);
        if (from) {
          const w = this.writes(from);
          const before = w.stored.get(doc.id) as StoredRow | undefined;
          if (typeof before?.pivots === 'string') {
            for (const k of pivotKeysOf(JSON.parse(before.pivots) as Pivots)) {
              w.deletePivot.run(k.kind, k.value, before.sandbox_name, before.verdicts, doc.id);
            }
          }
          if (from.day !== day) w.deleteDoc.run(doc.id);
        }
      }
      to.upsertDoc.run({
        id: doc.id,
        sha256: doc.sha256,
        sandbox_name: doc.sandbox_name,
        analysis_date: doc.analysis_date,
        last_modification_date: doc.last_modification_date,
        doc: json,
        indexed_at: now,
        verdicts,
        md5: hunt ? doc.md5 : null,
        sha1: hunt ? doc.sha1 : null,
      });
      this.parts.place(doc.id, day, doc.last_modification_date);
      // a meta from a chunk older than the hunting fields: derive them from the document, as the migration does
      let listed = verdicts;
      if (!hunt) {
        to.huntFromDoc.run(doc.id);
        listed = to.verdictsOf.get(doc.id) as string;
      }
      pending.latest.set(doc.id, index);
      for (const { kind, value } of pivotKeysOf(doc.pivots)) {
        pending.rows.push({
          item: index,
          day,
          kind,
          value,
          id: doc.id,
          date: doc.analysis_date,
          sandbox: doc.sandbox_name,
          verdicts: listed,
        });
      }
      return { id: doc.id, status: 'ok' };
    } catch (err) {
      return rejectUnlessTransient(err, doc.id);
    }
  }

  async get(id: string): Promise<BehaviourDoc | null> {
    const where = this.parts.locate(id);
    const part = where && this.parts.get(where.day);
    if (!part) return null;
    const doc = this.db.prepare(`SELECT doc FROM ${part.behaviours} WHERE id = ?`).pluck().get(id) as string | undefined;
    return doc === undefined ? null : (JSON.parse(doc) as BehaviourDoc);
  }

  async query(kind: PivotKind, value: string): Promise<string[]> {
    const key = pivotKey(value);
    // the views answer over every day; each day's part of the answer comes from its own index
    const rows =
      kind === 'sha256'
        ? this.db.prepare('SELECT id FROM behaviours WHERE sha256 = ?').pluck().all(key)
        : this.db.prepare('SELECT id FROM pivots WHERE kind = ? AND value = ?').pluck().all(kind, key);
    return (rows as string[]).sort(compareText);
  }

  /**
   * Day by day (the partitions' order), by id within a day: each page is a keyset read of one
   * partition's own index, so a page costs the same at the end of a large selection as at its
   * start. The cursor is `<day>:<last id>`.
   */
  async scan(q: ScanQuery, cursor: string | undefined, limit: number): Promise<ScanPage> {
    const at = cursor ? /^(-?\d+):(.*)$/s.exec(cursor) : null;
    let day = at ? Number(at[1]) : -Infinity;
    let after = at ? (at[2] as string) : '';
    const docs: BehaviourDoc[] = [];
    const want = Math.max(1, Math.floor(limit));
    const window = [
      ...(q.since !== undefined ? [['analysis_date >= ?', q.since] as const] : []),
      ...(q.until !== undefined ? [['analysis_date < ?', q.until] as const] : []),
    ];
    for (const part of this.parts.list()) {
      if (part.day < day) continue;
      if (part.day > day) after = '';
      day = part.day;
      const b = part.behaviours;
      const where: string[] = [];
      const args: unknown[] = [];
      let sql: string;
      if (q.pivot && q.pivot.kind !== 'sha256') {
        // the pivot rows' key (kind, value, id) gives the order; each row's document by its primary key
        where.push('v.kind = ?', 'v.value = ?', 'v.id > ?', ...window.map(([w]) => `v.${w}`));
        args.push(q.pivot.kind, pivotKey(q.pivot.value), after, ...window.map(([, v]) => v));
        sql = `SELECT b.id, b.doc FROM ${part.pivots} v JOIN ${b} b ON b.id = v.id WHERE ${where.join(' AND ')} ORDER BY v.id LIMIT ?`;
      } else {
        where.push('id > ?', ...(q.pivot ? ['sha256 = ?'] : []), ...window.map(([w]) => w));
        args.push(after, ...(q.pivot ? [pivotKey(q.pivot.value)] : []), ...window.map(([, v]) => v));
        sql = `SELECT id, doc FROM ${b} WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`;
      }
      const rows = this.db.prepare(sql).all(...args, want - docs.length) as { id: string; doc: string }[];
      for (const r of rows) docs.push(JSON.parse(r.doc) as BehaviourDoc);
      if (docs.length >= want) {
        const last = rows[rows.length - 1];
        return { docs, next: `${day}:${last?.id ?? after}` };
      }
    }
    return { docs };
  }

  async top(kind: Exclude<PivotKind, 'sha256'>, limit: number): Promise<{ value: string; count: number }[]> {
    return this.db
      .prepare('SELECT value, count(*) AS count FROM pivots WHERE kind = ? GROUP BY value ORDER BY count DESC, value LIMIT ?')
      .all(kind, limit) as { value: string; count: number }[];
  }

  async count(): Promise<number> {
    return this.db.prepare('SELECT count(*) FROM behaviour_days').pluck().get() as number;
  }
}
