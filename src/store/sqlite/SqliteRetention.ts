import type { Database, Statement } from 'better-sqlite3';
import type { Pivots } from '../../normalize/index.js';
import { emptyPruneReport, type PruneOptions, type PruneReport, type Retention } from '../Retention.js';
import { Partitions } from './Partitions.js';
import { pivotKeysOf } from './PivotRow.js';
import { PIVOT_ROW, UNDATED, type Partition, type StoredRow } from './partitionSchema.js';

/**
 * Rows one transaction removes at most: a step holds the write lock for tens of milliseconds, so
 * an index stage sharing the file waits that long at worst (its busy timeout is 15 s).
 */
const STEP_ROWS = 2000;

/** One bookkeeping table: how to count and remove the rows written before a time (ms). */
interface BookTable {
  key: keyof Pick<PruneReport, 'deadLetters' | 'batches' | 'watchHits' | 'artefacts' | 'sharedObjects'>;
  count: Statement;
  /** Whether a row written before a time remains (one probe of the time index, not a count). */
  any: Statement;
  /** Removes up to `limit` rows written before `before`; returns how many. */
  remove: (before: number, limit: number) => number;
}

/** A partition's statements of retention. */
interface DayPrune {
  expired: Statement;
  countExpired: Statement;
  anyExpired: Statement;
  any: Statement;
  oldest: Statement;
  newest: Statement;
  deleteDoc: Statement;
  deletePivot: Statement;
}

/**
 * Retention of the embedded store, in short steps by each record's own date: behaviours by
 * `last_modification_date` (oldest day first, through each day's by_lmd index, with their pivot
 * rows and their place in the locator), then the day's emptied tables are dropped; dead letters,
 * batch-log rows (and their chunk marks), watch hits and artefact records by the time they were
 * written. The pages freed go to SQLite's free list and are reused by the next writes, so a store
 * under retention stops growing once its window is full.
 */
export class SqliteRetention implements Retention {
  private readonly parts: Partitions;
  private readonly day: (p: Partition) => DayPrune;
  private readonly books: BookTable[];

  constructor(private readonly db: Database) {
    this.parts = new Partitions(db);
    this.day = this.parts.cache((p) => {
      const t = p.behaviours;
      return {
        expired: db.prepare(
          `SELECT id, json_extract(doc, '$.pivots') AS pivots, sandbox_name, verdicts FROM ${t} WHERE last_modification_date < ? ORDER BY last_modification_date LIMIT ?`,
        ),
        countExpired: db.prepare(`SELECT count(*) FROM ${t} WHERE last_modification_date < ?`).pluck(),
        anyExpired: db.prepare(`SELECT 1 FROM ${t} WHERE last_modification_date < ? LIMIT 1`).pluck(),
        any: db.prepare(`SELECT 1 FROM ${t} LIMIT 1`).pluck(),
        oldest: db.prepare(`SELECT min(last_modification_date) FROM ${t}`).pluck(),
        newest: db.prepare(`SELECT max(last_modification_date) FROM ${t}`).pluck(),
        deleteDoc: db.prepare(`DELETE FROM ${t} WHERE id = ?`),
        deletePivot: db.prepare(`DELETE FROM ${p.pivots} WHERE ${PIVOT_ROW}`),
      };
    });
    const batchNames = db.prepare('SELECT batch FROM batches WHERE finished_at < ? ORDER BY finished_at LIMIT ?').pluck();
    const dropChunks = db.prepare('DELETE FROM batch_chunks WHERE batch = ?');
    const dropBatch = db.prepare('DELETE FROM batches WHERE batch = ?');
    const byRowid = (table: string, column: string): ((before: number, limit: number) => number) => {
      const s = db.prepare(
        `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${column} < ? ORDER BY ${column} LIMIT ?)`,
      );
      return (before, limit) => s.run(before, limit).changes;
    };
    const byKey = (table: string, key: string, column: string): ((before: number, limit: number) => number) => {
      const s = db.prepare(
        `DELETE FROM ${table} WHERE (${key}) IN (SELECT ${key} FROM ${table} WHERE ${column} < ? ORDER BY ${column} LIMIT ?)`,
      );
      return (before, limit) => s.run(before, limit).changes;
    };
    this.books = [
      { key: 'deadLetters', ...this.probes('dead_letters', 'created_at'), remove: byRowid('dead_letters', 'created_at') },
      {
        key: 'batches',
        ...this.probes('batches', 'finished_at'),
        remove: (before, limit) => {
          const names = batchNames.all(before, limit) as string[];
          for (const b of names) {
            dropChunks.run(b);
            dropBatch.run(b);
          }
          return names.length;
        },
      },
      {
        key: 'watchHits',
        ...this.probes('watch_hits', 'at'),
        remove: byKey('watch_hits', 'watch, behaviour_id, last_modified', 'at'),
      },
      { key: 'artefacts', ...this.probes('artefacts', 'fetched_at'), remove: byKey('artefacts', 'behaviour_id, kind', 'fetched_at') },
      this.sharedObjects(),
    ];
  }

  /**
   * The objects of the shared collections, by the time they were added (epoch microseconds: the
   * cutoff in ms is scaled in the statements). Prepared on first use: a store file opened read
   * only may predate the table.
   */
  private sharedObjects(): BookTable {
    const WHERE = 'date_added < ? * 1000';
    let s: { count: Statement; any: Statement; remove: Statement } | undefined;
    const get = () =>
      (s ??= {
        count: this.db.prepare(`SELECT count(*) FROM shared_objects WHERE ${WHERE}`).pluck(),
        any: this.db.prepare(`SELECT 1 FROM shared_objects WHERE ${WHERE} LIMIT 1`).pluck(),
        remove: this.db.prepare(
          `DELETE FROM shared_objects WHERE (collection, date_added) IN (SELECT collection, date_added FROM shared_objects WHERE ${WHERE} ORDER BY date_added LIMIT ?)`,
        ),
      });
    const lazy = (k: 'count' | 'any'): Statement => ({ get: (before: number) => get()[k].get(before) }) as unknown as Statement;
    return {
      key: 'sharedObjects',
      count: lazy('count'),
      any: lazy('any'),
      remove: (before, limit) => get().remove.run(before, limit).changes,
    };
  }

  private probes(table: string, column: string): Pick<BookTable, 'count' | 'any'> {
    return {
      count: this.db.prepare(`SELECT count(*) FROM ${table} WHERE ${column} < ?`).pluck(),
      any: this.db.prepare(`SELECT 1 FROM ${table} WHERE ${column} < ? LIMIT 1`).pluck(),
    };
  }

  async prune(o: PruneOptions): Promise<PruneReport> {
    const report = emptyPruneReport();
    let budget = o.maxRows ?? Number.POSITIVE_INFINITY;
    const docsBefore = o.behavioursBefore;
    // bookkeeping times are epoch milliseconds
    const bookBefore = o.bookkeepingBefore === undefined ? undefined : o.bookkeepingBefore * 1000;
    if (o.dryRun) {
      if (docsBefore !== undefined) {
        for (const p of this.reaching(docsBefore)) {
          const expired = this.unlessDropped(p, () => this.day(p).countExpired.get(docsBefore) as number);
          if (expired === undefined) continue;
          report.behaviours += expired;
          // a whole day past the cutoff holds expired behaviours only, and the undated tables of an
          // older store go once all they hold has expired: either would be dropped
          const whole =
            p.day === UNDATED ? this.db.prepare(`SELECT count(*) FROM ${p.behaviours}`).pluck().get() === expired : p.end <= docsBefore;
          if (whole) report.partitions.push(p.behaviours, p.pivots);
        }
      }
      if (bookBefore !== undefined) for (const t of this.books) report[t.key] = t.count.get(bookBefore) as number;
      return report;
    }
    if (docsBefore !== undefined) {
      for (const p of this.reaching(docsBefore)) {
        const step = this.unlessDropped(p, () => {
          while (budget > 0) {
            const n = this.removeBehaviours(p, docsBefore, Math.min(budget, STEP_ROWS));
            report.behaviours += n;
            budget -= n;
            if (n === 0) break;
          }
          // a step that used its whole budget may have left some: one probe, not a count of them all
          if (budget <= 0 && this.day(p).anyExpired.get(docsBefore) !== undefined) return 'more';
          if (this.dropIfEmpty(p, docsBefore)) report.partitions.push(p.behaviours, p.pivots);
          return 'done';
        });
        if (step === 'more') {
          report.done = false;
          break;
        }
      }
    }
    if (bookBefore !== undefined) {
      for (const t of this.books) {
        while (budget > 0) {
          const n = this.db.transaction(() => t.remove(bookBefore, Math.min(budget, STEP_ROWS))).immediate();
          report[t.key] += n;
          budget -= n;
          if (n === 0) break;
        }
        if (budget <= 0 && t.any.get(bookBefore) !== undefined) report.done = false;
      }
    }
    return report;
  }

  async oldest(): Promise<number | null> {
    // the first entry of each by_lmd index, up to the first day holding any (days hold their own dates only)
    let oldest: number | null = null;
    for (const p of this.parts.list()) {
      const m = this.unlessDropped(p, () => this.day(p).oldest.get() as number | null) ?? null;
      if (m !== null && (oldest === null || m < oldest)) oldest = m;
      if (m !== null && p.day !== UNDATED) break;
    }
    return oldest;
  }

  async newest(): Promise<number | null> {
    // the last entry of each by_lmd index, every day's (the undated tables may hold any date)
    let newest: number | null = null;
    for (const p of this.parts.list()) {
      const m = this.unlessDropped(p, () => this.day(p).newest.get() as number | null) ?? null;
      if (m !== null && (newest === null || m > newest)) newest = m;
    }
    return newest;
  }

  /**
   * `work` on a partition, or undefined when another process (a second prune, the retention of
   * another index stage) dropped it meanwhile: its behaviours are gone already, which is no damage.
   */
  private unlessDropped<T>(p: Partition, work: () => T): T | undefined {
    try {
      return work();
    } catch (err) {
      if (/no such table/i.test((err as Error).message) && this.parts.get(p.day) === undefined) return undefined;
      throw err;
    }
  }

  /** The partitions that may hold behaviours modified before `before`, oldest first. */
  private reaching(before: number): Partition[] {
    return this.parts.list().filter((p) => p.day === UNDATED || p.end - 86_400 < before);
  }

  /** One transaction: up to `limit` of a day's oldest expired behaviours, their pivot rows and their places. */
  private removeBehaviours(p: Partition, before: number, limit: number): number {
    const d = this.day(p);
    return this.db
      .transaction(() => {
        const rows = d.expired.all(before, limit) as (StoredRow & { id: string })[];
        for (const { id, pivots, sandbox_name: sandbox, verdicts } of rows) {
          // a behaviour's rows are those of its stored document's pivots (SqliteSink writes them so)
          if (typeof pivots === 'string') {
            for (const k of pivotKeysOf(JSON.parse(pivots) as Pivots)) d.deletePivot.run(k.kind, k.value, sandbox, verdicts, id);
          }
          d.deleteDoc.run(id);
          this.parts.forget(id, p.day);
        }
        return rows.length;
      })
      .immediate();
  }

  /**
   * Drops a partition retention has emptied: a whole day past the cutoff, or the undated tables
   * of an older store. Its tables hold no row then, so the drop frees a few pages at most. Says
   * whether it dropped it (the prune report names the tables).
   */
  private dropIfEmpty(p: Partition, before: number): boolean {
    if (p.end > before && p.day !== UNDATED) return false;
    // a day still holding behaviours (the undated partition until retention reaches its last) takes no lock
    if (this.day(p).any.get() !== undefined) return false;
    return this.db
      .transaction(() => {
        const still = this.parts.get(p.day);
        if (!still || this.day(still).any.get() !== undefined) return false;
        this.parts.drop(still);
        return true;
      })
      .immediate();
  }
}
