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
  PRIMARY KEY (batch, n)
) WITHOUT ROWID;
`;

const COLUMNS = `batch, source, status, lines, accepted, rejected, chunks, bytes_decoded AS bytesDecoded, error,
  started_at AS startedAt, finished_at AS finishedAt`;

/** Batch log in the embedded SQLite file. */
export class SqliteBatchLog implements BatchLog {
  constructor(private readonly db: Database) {
    db.exec(SCHEMA);
  }

  async record(e: BatchLogEntry): Promise<void> {
    // one transaction with chunkStored's, so the last of the two to run settles `ok` exactly
    await writeWhenFree(this.db, () => {
      const status = e.status === 'ok' && e.chunks > 0 && this.countStored(e.batch, e.chunks) < e.chunks ? 'pending' : e.status;
      this.db
        .prepare(
          `INSERT OR REPLACE INTO batches (batch, source, status, lines, accepted, rejected, chunks, bytes_decoded, error, started_at, finished_at)
             VALUES (@batch, @source, @status, @lines, @accepted, @rejected, @chunks, @bytesDecoded, @error, @startedAt, @finishedAt)`,
        )
        .run({ ...e, status });
    });
  }

  async chunkStored(batch: MinuteId, n: number): Promise<void> {
    await writeWhenFree(this.db, () => {
      this.db.prepare('INSERT OR IGNORE INTO batch_chunks (batch, n) VALUES (?, ?)').run(batch, n);
      const row = this.db.prepare("SELECT chunks FROM batches WHERE batch = ? AND status = 'pending'").get(batch) as
        { chunks: number } | undefined;
      if (row && this.countStored(batch, row.chunks) >= row.chunks) {
        this.db.prepare("UPDATE batches SET status = 'ok' WHERE batch = ? AND status = 'pending'").run(batch);
      }
    });
  }

  async storedChunks(batch: MinuteId, below: number): Promise<number[]> {
    const rows = this.db.prepare('SELECT n FROM batch_chunks WHERE batch = ? AND n < ? ORDER BY n').all(batch, below) as { n: number }[];
    return rows.map((r) => r.n);
  }

  private countStored(batch: MinuteId, below: number): number {
    return (this.db.prepare('SELECT count(*) AS c FROM batch_chunks WHERE batch = ? AND n < ?').get(batch, below) as { c: number }).c;
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
}
