import type { Database, Statement } from 'better-sqlite3';
import { DEFAULT_MAX_DEPTH, type PrivateFileDoc } from '../../normalize/index.js';
import {
  privateFileId,
  privateFileJson,
  privateFileLookupValue,
  resultId,
  type PrivateFileKey,
  type PrivateFileStore,
} from '../PrivateFileStore.js';
import type { ItemResult } from '../Sink.js';
import { callFailed, rejectUnlessTransient } from './sqliteErrors.js';

// A table of its own (never the behaviours table), so private scanning data can be exported,
// purged or access-controlled apart from public data. Lookup columns are indexed.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS private_files (
  id TEXT PRIMARY KEY NOT NULL,
  sha256 TEXT NOT NULL,
  sha1 TEXT,
  md5 TEXT,
  vhash TEXT,
  fetched_at INTEGER NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS private_files_sha256 ON private_files(sha256);
CREATE INDEX IF NOT EXISTS private_files_sha1 ON private_files(sha1);
CREATE INDEX IF NOT EXISTS private_files_md5 ON private_files(md5);
CREATE INDEX IF NOT EXISTS private_files_vhash ON private_files(vhash);
`;

/** Column of each lookup key: a fixed table, so no caller string ever reaches the SQL text. */
const COLUMNS: Readonly<Record<PrivateFileKey, string>> = Object.freeze({ sha256: 'sha256', sha1: 'sha1', md5: 'md5', vhash: 'vhash' });

/** Private file reports in the embedded SQLite file, keyed by sha256; the newest fetched_at wins. */
export class SqlitePrivateFileStore implements PrivateFileStore {
  private readonly upsertDoc: Statement;

  /** @param maxDepth documents nested deeper are rejected `too_deep` (feed.maxDepth). */
  constructor(
    private readonly db: Database,
    private readonly maxDepth = DEFAULT_MAX_DEPTH,
  ) {
    // a read-only connection finds the schema in place (openForReads checks it) and never writes
    if (!db.readonly) db.exec(SCHEMA);
    // Newer wins; an equal fetched_at rewrites the same state, which keeps replays idempotent.
    this.upsertDoc = db.prepare(`
      INSERT INTO private_files (id, sha256, sha1, md5, vhash, fetched_at, doc)
      VALUES (@id, @sha256, @sha1, @md5, @vhash, @fetched_at, @doc)
      ON CONFLICT(id) DO UPDATE SET
        sha256 = excluded.sha256, sha1 = excluded.sha1, md5 = excluded.md5, vhash = excluded.vhash,
        fetched_at = excluded.fetched_at, doc = excluded.doc
      WHERE excluded.fetched_at >= private_files.fetched_at`);
  }

  async upsert(docs: readonly PrivateFileDoc[]): Promise<ItemResult[]> {
    const write = this.db.transaction((items: readonly PrivateFileDoc[]) => items.map((doc) => this.writeOne(doc)));
    try {
      return write.immediate(docs);
    } catch (err) {
      return docs.map((d) => callFailed(err, resultId(d), this.db.name));
    }
  }

  private writeOne(doc: PrivateFileDoc): ItemResult {
    const prepared = privateFileJson(doc, this.maxDepth);
    if (!('json' in prepared)) return { id: resultId(doc), status: 'rejected', ...prepared };
    try {
      const changed = this.upsertDoc.run({
        id: doc.id,
        sha256: doc.sha256,
        sha1: doc.sha1 ?? null,
        md5: doc.md5 ?? null,
        vhash: doc.vhash ?? null,
        fetched_at: doc.fetched_at,
        doc: prepared.json,
      }).changes;
      return changed === 0 ? { id: doc.id, status: 'ok', stale: true } : { id: doc.id, status: 'ok' };
    } catch (err) {
      return rejectUnlessTransient(err, doc.id);
    }
  }

  async get(sha256: string): Promise<PrivateFileDoc | null> {
    const id = privateFileId(sha256);
    if (id === undefined) return null;
    const row = this.db.prepare('SELECT doc FROM private_files WHERE id = ?').get(id) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as PrivateFileDoc) : null;
  }

  async query(key: PrivateFileKey, value: string): Promise<string[]> {
    if (!Object.hasOwn(COLUMNS, key) || typeof value !== 'string') return [];
    const column = COLUMNS[key];
    const v = privateFileLookupValue(key, value);
    if (v === '') return [];
    const rows = this.db.prepare(`SELECT id FROM private_files WHERE ${column} = ? ORDER BY id`).all(v) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async count(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM private_files').get() as { n: number }).n;
  }
}
