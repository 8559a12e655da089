import type { Database, Statement } from 'better-sqlite3';
import type { Pivots } from '../../normalize/index.js';
import { emptyPruneReport, type PruneOptions, type PruneReport, type Retention } from '../Retention.js';
import { pivotKeysOf } from './PivotRow.js';

/**
 * Rows one transaction removes at most: a step holds the write lock for tens of milliseconds, so
 * an index stage sharing the file waits that long at worst (its busy timeout is 15 s).
 */
const STEP_ROWS = 2000;

/** One bookkeeping table: how to count and remove the rows written before a time (ms). */
interface BookTable {
  key: keyof Pick<PruneReport, 'deadLetters' | 'batches' | 'watchHits' | 'artefacts'>;
  count: Statement;
  /** Whether a row written before a time remains (one probe of the time index, not a count). */
  any: Statement;
  /** Removes up to `limit` rows written before `before`; returns how many. */
  remove: (before: number, limit: number) => number;
}

/**
 * Retention of the embedded store, in short steps by each record's own date: behaviours by
 * `last_modification_date` (through behaviours_by_lmd, with their pivot rows), dead letters,
 * batch-log rows (and their chunk marks), watch hits and artefact records by the time they were
 * written. The pages freed go to SQLite's free list and are reused by the next writes, so a store
 * under retention stops growing once its window is full.
 */
export class SqliteRetention implements Retention {
  private readonly expired: Statement;
  private readonly countExpired: Statement;
  private readonly anyExpired: Statement;
  private readonly deleteDoc: Statement;
  private readonly deletePivot: Statement;
  private readonly books: BookTable[];

  constructor(private readonly db: Database) {
    this.expired = db.prepare(
      "SELECT id, json_extract(doc, '$.pivots') AS pivots FROM behaviours WHERE last_modification_date < ? ORDER BY last_modification_date LIMIT ?",
    );
    this.countExpired = db.prepare('SELECT count(*) FROM behaviours WHERE last_modification_date < ?').pluck();
    this.anyExpired = db.prepare('SELECT 1 FROM behaviours WHERE last_modification_date < ? LIMIT 1').pluck();
    this.deleteDoc = db.prepare('DELETE FROM behaviours WHERE id = ?');
    this.deletePivot = db.prepare('DELETE FROM pivots WHERE kind = ? AND value = ? AND id = ?');
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
    ];
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
      if (docsBefore !== undefined) report.behaviours = this.countExpired.get(docsBefore) as number;
      if (bookBefore !== undefined) for (const t of this.books) report[t.key] = t.count.get(bookBefore) as number;
      return report;
    }
    if (docsBefore !== undefined) {
      while (budget > 0) {
        const n = this.removeBehaviours(docsBefore, Math.min(budget, STEP_ROWS));
        report.behaviours += n;
        budget -= n;
        if (n === 0) break;
      }
      // a step that used its whole budget may have left some: one probe, not a count of them all
      if (budget <= 0 && this.anyExpired.get(docsBefore) !== undefined) report.done = false;
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
    // the first entry of behaviours_by_lmd
    return (this.db.prepare('SELECT min(last_modification_date) FROM behaviours').pluck().get() as number | null) ?? null;
  }

  /** One transaction: up to `limit` of the oldest expired behaviours and their pivot rows. */
  private removeBehaviours(before: number, limit: number): number {
    return this.db
      .transaction(() => {
        const rows = this.expired.all(before, limit) as { id: string; pivots: string | null }[];
        for (const { id, pivots } of rows) {
          // a behaviour's rows are those of its stored document's pivots (SqliteSink writes them so)
          if (typeof pivots === 'string') {
            for (const k of pivotKeysOf(JSON.parse(pivots) as Pivots)) this.deletePivot.run(k.kind, k.value, id);
          }
          this.deleteDoc.run(id);
        }
        return rows.length;
      })
      .immediate();
  }
}
