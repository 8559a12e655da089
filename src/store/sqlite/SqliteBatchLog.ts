import type { Database } from 'better-sqlite3';
import { writeWhenFree } from './writeWhenFree.js';
import type { BatchLog, BatchLogEntry } from '../BatchLog.js';
import type { MinuteId } from '../../minute/index.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS batches (
  batch TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  status TEXT NOT NULL,
  lines INTEGER NOT NULL,
  accepted INTEGER NOT NULL,
  rejected INTEGER NOT NULL,
  chunks INTEGER NOT NULL,
  bytes_decoded INTEGER NOT NULL,
  error TEXT,
  started_at INTEGER NOT NULL,
  finished_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS batches_finished ON batches(finished_at);
CREATE TABLE IF NOT EXISTS batch_chunks (
  batch TEXT NOT NULL,
  n INTEGER NOT NULL,
  records INTEGER,
  error TEXT,
  PRIMARY KEY (batch, n)
) WITHOUT ROWID;
`;

/** Twelve digits: a feed minute's batch id. */
const MINUTE_GLOB = '[0-9]'.repeat(12);

const COLUMNS = `batch, source, status, lines, accepted, rejected, chunks, bytes_decoded AS bytesDecoded, error,
  started_at AS startedAt, finished_at AS finishedAt`;

/**
 * Gives the chunk marks of a store created before them their document count and failure reason
 * (a no-op on a current store; skipped where the store cannot be written).
 */
function migrateChunkColumns(db: Database): boolean {
  const have = new Set((db.prepare('PRAGMA table_info(batch_chunks)').all() as { name: string }[]).map((c) => c.name));
  if (have.size === 0 || (have.has('records') && have.has('error'))) return true;
  if (db.readonly) return false;
  try {
    db.transaction(() => {
      if (!have.has('records')) db.exec('ALTER TABLE batch_chunks ADD COLUMN records INTEGER');
      if (!have.has('error')) db.exec('ALTER TABLE batch_chunks ADD COLUMN error TEXT');
    }).immediate();
  } catch (err) {
    // a second process migrated it meanwhile
    if (!/duplicate column/.test((err as Error).message)) throw err;
  }
  return true;
}

/**
 * Batch log in the embedded SQLite file. A batch whose feed stage finished with chunks has its
 * status settled from its chunk marks in the same transaction as every write that changes them
 * (`settle`): `failed` with the first failed chunk's reason, else `ok` once all are stored, else
 * `pending`. The `batches` table therefore always holds the true status for readers using SQL.
 */
export class SqliteBatchLog implements BatchLog {
  /** `AND error IS NULL` where the marks have the column (a store of an earlier version read read-only may not). */
  private readonly storedOnly: string;

  constructor(private readonly db: Database) {
    // a read-only connection finds the schema in place (openForReads checks it) and never writes
    if (!db.readonly) db.exec(SCHEMA);
    this.storedOnly = migrateChunkColumns(db) ? 'AND error IS NULL' : '';
  }

  async record(e: BatchLogEntry): Promise<void> {
    await writeWhenFree(this.db, () => {
      this.db
        .prepare(
          `INSERT OR REPLACE INTO batches (batch, source, status, lines, accepted, rejected, chunks, bytes_decoded, error, started_at, finished_at)
             VALUES (@batch, @source, @status, @lines, @accepted, @rejected, @chunks, @bytesDecoded, @error, @startedAt, @finishedAt)`,
        )
        .run(e);
      if (e.status === 'ok') this.settle(e.batch);
    });
  }

  async chunkStored(batch: MinuteId, n: number, records?: number): Promise<void> {
    await writeWhenFree(this.db, () => {
      this.db
        .prepare('INSERT OR REPLACE INTO batch_chunks (batch, n, records, error) VALUES (?, ?, ?, NULL)')
        .run(batch, n, records ?? null);
      // a stored chunk changes nothing of a batch already ok
      this.settle(batch, true);
    });
  }

  async chunkFailed(batch: MinuteId, n: number, reason: string): Promise<void> {
    await writeWhenFree(this.db, () => {
      // this try's failure stands even over a mark of an earlier run: the store did not take it now
      this.db.prepare('INSERT OR REPLACE INTO batch_chunks (batch, n, records, error) VALUES (?, ?, NULL, ?)').run(batch, n, reason);
      this.settle(batch);
    });
  }

  /**
   * The status of a batch whose feed stage finished with chunks (a failed feed stage records
   * none), from its chunk marks.
   */
  private settle(batch: MinuteId, unlessOk = false): void {
    this.db
      .prepare(
        `UPDATE batches SET
           error = (SELECT c.error FROM batch_chunks c WHERE c.batch = batches.batch AND c.n < batches.chunks AND c.error IS NOT NULL
                     ORDER BY c.n LIMIT 1),
           status = CASE
             WHEN EXISTS (SELECT 1 FROM batch_chunks c WHERE c.batch = batches.batch AND c.n < batches.chunks AND c.error IS NOT NULL)
               THEN 'failed'
             WHEN (SELECT count(*) FROM batch_chunks c WHERE c.batch = batches.batch AND c.n < batches.chunks AND c.error IS NULL)
               >= batches.chunks THEN 'ok'
             ELSE 'pending' END
         WHERE batch = ? AND chunks > 0${unlessOk ? " AND status <> 'ok'" : ''}`,
      )
      .run(batch);
  }

  async storedChunks(batch: MinuteId, below: number): Promise<number[]> {
    const rows = this.db.prepare('SELECT n FROM batch_chunks WHERE batch = ? AND n < ? AND error IS NULL ORDER BY n').all(batch, below) as {
      n: number;
    }[];
    return rows.map((r) => r.n);
  }

  async storedRecords(batch: MinuteId, below: number): Promise<number> {
    if (!this.storedOnly) return 0;
    return (
      this.db
        .prepare('SELECT coalesce(sum(records), 0) AS n FROM batch_chunks WHERE batch = ? AND n < ? AND error IS NULL')
        .get(batch, below) as { n: number }
    ).n;
  }

  async get(batches: readonly MinuteId[]): Promise<BatchLogEntry[]> {
    if (batches.length === 0) return [];
    return this.db
      .prepare(`SELECT ${COLUMNS} FROM batches WHERE batch IN (SELECT value FROM json_each(?)) ORDER BY batch`)
      .all(JSON.stringify(batches)) as BatchLogEntry[];
  }

  async recent(limit: number): Promise<BatchLogEntry[]> {
    return this.db.prepare(`SELECT ${COLUMNS} FROM batches ORDER BY finished_at DESC, batch DESC LIMIT ?`).all(limit) as BatchLogEntry[];
  }

  async minutes(limit: number): Promise<BatchLogEntry[]> {
    // the range walks the primary key backwards from the newest minute; other batches (lookup-…) sort after it
    return this.db
      .prepare(
        `SELECT ${COLUMNS} FROM batches WHERE batch BETWEEN '000000000000' AND '999999999999' AND batch GLOB '${MINUTE_GLOB}' ORDER BY batch DESC LIMIT ?`,
      )
      .all(limit) as BatchLogEntry[];
  }
}
