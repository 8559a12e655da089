import type { Database } from 'better-sqlite3';
import type { BatchLog, BatchLogEntry } from './BatchLog.js';
import type { MinuteId } from './minute.js';

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
`;

const COLUMNS = `batch, source, status, lines, accepted, rejected, chunks, bytes_decoded AS bytesDecoded, error,
  started_at AS startedAt, finished_at AS finishedAt`;

/** Batch log in the embedded SQLite file. */
export class SqliteBatchLog implements BatchLog {
  constructor(private readonly db: Database) {
    db.exec(SCHEMA);
  }

  async record(e: BatchLogEntry): Promise<void> {
    this.db
      .prepare(
        `INSERT OR REPLACE INTO batches (batch, source, status, lines, accepted, rejected, chunks, bytes_decoded, error, started_at, finished_at)
         VALUES (@batch, @source, @status, @lines, @accepted, @rejected, @chunks, @bytesDecoded, @error, @startedAt, @finishedAt)`,
      )
      .run(e);
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
