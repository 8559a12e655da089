import type { Database, Statement } from 'better-sqlite3';
import { DEFAULT_MAX_DEPTH, type BehaviourDoc } from '../../normalize/index.js';
import { depthRejection, invalidDocReason, pivotKey, type ItemResult, type PivotKind, type Sink, type SinkDoc } from '../Sink.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS behaviours (
  id TEXT PRIMARY KEY NOT NULL,
  sha256 TEXT NOT NULL,
  sandbox_name TEXT NOT NULL,
  analysis_date INTEGER,
  last_modification_date INTEGER NOT NULL,
  doc TEXT NOT NULL,
  indexed_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS behaviours_sha256 ON behaviours(sha256);
CREATE TABLE IF NOT EXISTS pivots (
  kind TEXT NOT NULL,
  value TEXT NOT NULL,
  id TEXT NOT NULL,
  PRIMARY KEY (kind, value, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pivots_by_id ON pivots(id);
`;

/** SQLite errors that clear up by themselves: another writer holds the lock, the disk is full. */
const TRANSIENT = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_IOERR']);

/**
 * The embedded sink: one SQLite file, behaviours keyed by id, one row per (pivot kind, value,
 * id) so every pivot lookup is an index range scan.
 */
export class SqliteSink implements Sink {
  readonly kind = 'sqlite';
  private readonly upsertDoc: Statement;
  private readonly deletePivots: Statement;
  private readonly insertPivot: Statement;

  /** @param maxDepth documents nested deeper are rejected `too_deep` (feed.maxDepth). */
  constructor(
    private readonly db: Database,
    private readonly maxDepth = DEFAULT_MAX_DEPTH,
  ) {
    db.exec(SCHEMA);
    // Newer wins; an equal date rewrites the same state, which keeps replays idempotent.
    // CAST: JSON handed over as UTF-8 bytes is stored as TEXT, as it is, with no decoding in JS
    this.upsertDoc = db.prepare(`
      INSERT INTO behaviours (id, sha256, sandbox_name, analysis_date, last_modification_date, doc, indexed_at)
      VALUES (@id, @sha256, @sandbox_name, @analysis_date, @last_modification_date, CAST(@doc AS TEXT), @indexed_at)
      ON CONFLICT(id) DO UPDATE SET
        sha256 = excluded.sha256, sandbox_name = excluded.sandbox_name, analysis_date = excluded.analysis_date,
        last_modification_date = excluded.last_modification_date, doc = excluded.doc, indexed_at = excluded.indexed_at
      WHERE excluded.last_modification_date >= behaviours.last_modification_date`);
    this.deletePivots = db.prepare('DELETE FROM pivots WHERE id = ?');
    this.insertPivot = db.prepare('INSERT OR IGNORE INTO pivots (kind, value, id) VALUES (?, ?, ?)');
  }

  async upsert(docs: readonly SinkDoc[]): Promise<ItemResult[]> {
    const now = Math.floor(Date.now() / 1000);
    const write = this.db.transaction((items: readonly SinkDoc[]) => items.map((doc) => this.writeOne(doc, now)));
    try {
      return write.immediate(docs);
    } catch (err) {
      // The transaction itself failed (lock timeout, I/O): every item may be retried.
      const code = (err as { code?: string }).code ?? 'SQLITE_ERROR';
      const reason = (err as Error).message;
      return docs.map((d) =>
        TRANSIENT.has(code)
          ? { id: d.meta.id, status: 'retryable' as const, code, reason }
          : { id: d.meta.id, status: 'rejected' as const, code, reason },
      );
    }
  }

  private writeOne(item: SinkDoc, now: number): ItemResult {
    const doc = item.meta;
    const invalid = invalidDocReason(doc);
    if (invalid) return { id: String(doc?.id), status: 'rejected', code: 'invalid_document', reason: invalid };
    const deep = depthRejection(doc, this.maxDepth);
    if (deep) return { id: doc.id, status: 'rejected', ...deep };
    const json = item.json;
    try {
      const changed = this.upsertDoc.run({
        id: doc.id,
        sha256: doc.sha256,
        sandbox_name: doc.sandbox_name,
        analysis_date: doc.analysis_date,
        last_modification_date: doc.last_modification_date,
        doc: json,
        indexed_at: now,
      }).changes;
      if (changed === 0) return { id: doc.id, status: 'ok', stale: true };
      this.deletePivots.run(doc.id);
      const p = doc.pivots;
      if (p.behash) this.insertPivot.run('behash', pivotKey(p.behash), doc.id);
      for (const v of p.sigma_rule_ids) this.insertPivot.run('sigma_rule_id', pivotKey(v), doc.id);
      for (const v of p.ja3) this.insertPivot.run('ja3', pivotKey(v), doc.id);
      for (const v of p.ja3s) this.insertPivot.run('ja3s', pivotKey(v), doc.id);
      for (const v of p.dropped_sha256) this.insertPivot.run('dropped_sha256', pivotKey(v), doc.id);
      return { id: doc.id, status: 'ok' };
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'SQLITE_ERROR';
      if (TRANSIENT.has(code)) throw err; // abort the transaction: the whole chunk is retried
      return { id: doc.id, status: 'rejected', code, reason: (err as Error).message };
    }
  }

  async get(id: string): Promise<BehaviourDoc | null> {
    const row = this.db.prepare('SELECT doc FROM behaviours WHERE id = ?').get(id) as { doc: string } | undefined;
    return row ? (JSON.parse(row.doc) as BehaviourDoc) : null;
  }

  async query(kind: PivotKind, value: string): Promise<string[]> {
    const key = pivotKey(value);
    const rows =
      kind === 'sha256'
        ? this.db.prepare('SELECT id FROM behaviours WHERE sha256 = ? ORDER BY id').all(key)
        : this.db.prepare('SELECT id FROM pivots WHERE kind = ? AND value = ? ORDER BY id').all(kind, key);
    return (rows as { id: string }[]).map((r) => r.id);
  }

  async top(kind: Exclude<PivotKind, 'sha256'>, limit: number): Promise<{ value: string; count: number }[]> {
    return this.db
      .prepare('SELECT value, count(*) AS count FROM pivots WHERE kind = ? GROUP BY value ORDER BY count DESC, value LIMIT ?')
      .all(kind, limit) as { value: string; count: number }[];
  }

  async count(): Promise<number> {
    return (this.db.prepare('SELECT count(*) AS n FROM behaviours').get() as { n: number }).n;
  }
}
