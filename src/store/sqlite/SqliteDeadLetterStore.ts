import type { Database } from 'better-sqlite3';
import { writeWhenFree } from './writeWhenFree.js';
import type {
  DeadLetter,
  DeadLetterFilter,
  DeadLetterInput,
  DeadLetterStage,
  DeadLetterStore,
  DeadLetterSummary,
} from '../DeadLetterStore.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS dead_letters (
  id TEXT PRIMARY KEY,
  stage TEXT NOT NULL,
  batch TEXT NOT NULL,
  line INTEGER,
  doc_id TEXT,
  code TEXT NOT NULL,
  path TEXT,
  message TEXT NOT NULL,
  raw TEXT NOT NULL,
  raw_encoding TEXT NOT NULL,
  raw_size INTEGER NOT NULL,
  raw_sha256 TEXT,
  raw_truncated INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS dead_letters_batch ON dead_letters(batch, stage);
CREATE INDEX IF NOT EXISTS dead_letters_created ON dead_letters(created_at);
`;

const COLUMNS = `id, stage, batch, line, doc_id AS docId, code, path, message, raw_encoding AS rawEncoding,
  raw_size AS rawSize, raw_sha256 AS rawSha256, raw_truncated AS rawTruncated, created_at AS createdAt, updated_at AS updatedAt`;

type Row = Omit<DeadLetter, 'rawTruncated'> & { rawTruncated: number };
const fromRow = <T extends { rawTruncated: number }>(r: T): Omit<T, 'rawTruncated'> & { rawTruncated: boolean } => ({
  ...r,
  rawTruncated: r.rawTruncated === 1,
});

/** Dead letters in the same SQLite file as the embedded sink. */
export class SqliteDeadLetterStore implements DeadLetterStore {
  constructor(private readonly db: Database) {
    // a read-only connection finds the schema in place (openForReads checks it) and never writes
    if (db.readonly) return;
    db.exec(SCHEMA);
    // stores written before raw_sha256 existed gain the column (NULL for their entries)
    const cols = db.prepare('PRAGMA table_info(dead_letters)').all() as { name: string }[];
    if (!cols.some((c) => c.name === 'raw_sha256')) db.exec('ALTER TABLE dead_letters ADD COLUMN raw_sha256 TEXT');
  }

  async put(entries: readonly DeadLetterInput[]): Promise<void> {
    if (entries.length === 0) return;
    const now = Date.now();
    const stmt = this.db.prepare(`
      INSERT INTO dead_letters (id, stage, batch, line, doc_id, code, path, message, raw, raw_encoding, raw_size, raw_sha256, raw_truncated, created_at, updated_at)
      VALUES (@id, @stage, @batch, @line, @docId, @code, @path, @message, @raw, @rawEncoding, @rawSize, @rawSha256, @rawTruncated, @now, @now)
      ON CONFLICT(id) DO UPDATE SET code = excluded.code, path = excluded.path, message = excluded.message,
        raw = excluded.raw, raw_encoding = excluded.raw_encoding, raw_size = excluded.raw_size,
        raw_sha256 = excluded.raw_sha256, raw_truncated = excluded.raw_truncated, updated_at = excluded.updated_at`);
    await writeWhenFree(this.db, () => {
      for (const e of entries) stmt.run({ ...e, rawSha256: e.rawSha256 ?? null, rawTruncated: e.rawTruncated ? 1 : 0, now });
    });
  }

  async get(id: string): Promise<DeadLetter | null> {
    const row = this.db.prepare(`SELECT ${COLUMNS}, raw FROM dead_letters WHERE id = ?`).get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  async list(opts: DeadLetterFilter & { limit?: number; offset?: number } = {}): Promise<DeadLetterSummary[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: string, arg: unknown): void => {
      where.push(clause);
      args.push(arg);
    };
    if (opts.stage) add('stage = ?', opts.stage);
    if (opts.batch) add('batch = ?', opts.batch);
    const sql = `SELECT ${COLUMNS} FROM dead_letters ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY batch, stage, line, id LIMIT ? OFFSET ?`;
    const rows = this.db.prepare(sql).all(...args, opts.limit ?? 1000, opts.offset ?? 0) as Omit<Row, 'raw'>[];
    return rows.map(fromRow);
  }

  async *iterate(pageSize = 500): AsyncIterable<DeadLetter> {
    let after = '';
    for (;;) {
      const rows = this.db
        .prepare(`SELECT ${COLUMNS}, raw FROM dead_letters WHERE id > ? ORDER BY id LIMIT ?`)
        .all(after, pageSize) as Row[];
      if (rows.length === 0) return;
      for (const r of rows) yield fromRow(r);
      after = (rows[rows.length - 1] as Row).id;
    }
  }

  async remove(ids: readonly string[]): Promise<number> {
    const stmt = this.db.prepare('DELETE FROM dead_letters WHERE id = ?');
    return this.db.transaction(() => ids.reduce((n, id) => n + stmt.run(id).changes, 0)).immediate();
  }

  async purge(): Promise<number> {
    return this.db.prepare('DELETE FROM dead_letters').run().changes;
  }

  async count(filter: { stage?: DeadLetterStage; batch?: string; batches?: readonly string[] } = {}): Promise<number> {
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (clause: string, arg: unknown): void => {
      where.push(clause);
      args.push(arg);
    };
    if (filter.stage) add('stage = ?', filter.stage);
    if (filter.batch) add('batch = ?', filter.batch);
    if (filter.batches) {
      if (filter.batches.length === 0) return 0;
      add('batch IN (SELECT value FROM json_each(?))', JSON.stringify(filter.batches));
    }
    const sql = `SELECT count(*) AS n FROM dead_letters ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`;
    return (this.db.prepare(sql).get(...args) as { n: number }).n;
  }

  async codes(sinceMs: number): Promise<{ code: string; count: number }[]> {
    // through the created_at index: the recent entries only
    return this.db
      .prepare('SELECT code, count(*) AS count FROM dead_letters WHERE created_at >= ? GROUP BY code ORDER BY count DESC, code')
      .all(sinceMs) as { code: string; count: number }[];
  }
}
