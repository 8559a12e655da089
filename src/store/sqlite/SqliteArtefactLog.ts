import type { Database, Statement } from 'better-sqlite3';
import type { ArtefactLog, ArtefactRecord } from '../ArtefactLog.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS artefacts (
  behaviour_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  path TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  source TEXT NOT NULL,
  fetched_at INTEGER NOT NULL,
  last_modified INTEGER,
  PRIMARY KEY (behaviour_id, kind)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS artefacts_fetched ON artefacts(fetched_at);
`;

/** Artefact records in the embedded SQLite file. */
export class SqliteArtefactLog implements ArtefactLog {
  private readonly upsert: Statement;
  private readonly select: Statement;

  constructor(db: Database) {
    // a read-only connection finds the schema in place (openForReads checks it) and never writes
    if (!db.readonly) {
      db.exec(SCHEMA);
      // stores written before records kept the report version
      const cols = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('artefacts') as string[];
      if (!cols.includes('last_modified')) db.exec('ALTER TABLE artefacts ADD COLUMN last_modified INTEGER');
    }
    this.upsert = db.prepare(`
      INSERT INTO artefacts (behaviour_id, kind, path, size, sha256, source, fetched_at, last_modified)
      VALUES (@behaviourId, @kind, @path, @size, @sha256, @source, @fetchedAt, @lastModified)
      ON CONFLICT(behaviour_id, kind) DO UPDATE SET
        path = excluded.path, size = excluded.size, sha256 = excluded.sha256, source = excluded.source,
        fetched_at = excluded.fetched_at, last_modified = excluded.last_modified`);
    this.select = db.prepare(`
      SELECT behaviour_id AS behaviourId, kind, path, size, sha256, source, fetched_at AS fetchedAt, last_modified AS lastModified
      FROM artefacts WHERE behaviour_id = ? ORDER BY kind`);
  }

  async record(rec: ArtefactRecord): Promise<void> {
    this.upsert.run({ ...rec, lastModified: rec.lastModified ?? null });
  }

  async list(behaviourId: string): Promise<ArtefactRecord[]> {
    const rows = this.select.all(behaviourId) as (ArtefactRecord & { lastModified: number | null })[];
    // absent, not null, where the record predates versions: the same shape as Elasticsearch's
    return rows.map(({ lastModified, ...r }) => (lastModified === null ? r : { ...r, lastModified }));
  }
}
