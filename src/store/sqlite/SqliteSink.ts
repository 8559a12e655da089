import type { Database, Statement } from 'better-sqlite3';
import { DEFAULT_MAX_DEPTH, type BehaviourDoc, type Pivots } from '../../normalize/index.js';
import {
  depthRejection,
  hasHuntFields,
  invalidDocReason,
  pivotKey,
  type ItemResult,
  type PivotKind,
  type Sink,
  type SinkDoc,
} from '../Sink.js';
import { byPivotKey, pivotKeysOf, type PendingPivots } from './PivotRow.js';
import { callFailed, rejectUnlessTransient } from './sqliteErrors.js';

/**
 * One row per (pivot kind, value, behaviour), carrying copies of the behaviour's analysis date,
 * sandbox and verdict list: a value's statistics are then one range scan of this table, with no
 * join to the behaviours. The copies are rewritten with the pivot rows on every stored version
 * of a behaviour (writeOne), so they always equal the stored document's: exact under replays.
 */
const PIVOTS_TABLE = (name: string): string => `
CREATE TABLE IF NOT EXISTS ${name} (
  kind TEXT NOT NULL,
  value TEXT NOT NULL,
  id TEXT NOT NULL,
  analysis_date INTEGER,
  sandbox_name TEXT NOT NULL DEFAULT '',
  verdicts TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY (kind, value, id)
) WITHOUT ROWID;`;

// verdicts (a JSON array), md5 and sha1 are what the hunting reads group and look up by
// (SqliteHuntReader); a store created before them gains them once, at open (migrateHuntColumns).
const TABLES = `
CREATE TABLE IF NOT EXISTS behaviours (
  id TEXT PRIMARY KEY NOT NULL,
  sha256 TEXT NOT NULL,
  sandbox_name TEXT NOT NULL,
  analysis_date INTEGER,
  last_modification_date INTEGER NOT NULL,
  doc TEXT NOT NULL,
  indexed_at INTEGER NOT NULL,
  verdicts TEXT NOT NULL DEFAULT '[]',
  md5 TEXT,
  sha1 TEXT
);
${PIVOTS_TABLE('pivots')}
`;

// Created after the migrations: some name their columns.
// - behaviours_by_date, newest first with id as the tie-break (the order of the hunting lists),
//   covering the sandbox and verdicts: it finds the newest page of a frequent value without
//   reading the table.
// - behaviours_by_lmd: retention's order (SqliteRetention removes the oldest first); keyed by time,
//   so the index stage appends to it instead of rewriting random pages.
// - pivots_groups: a value's rows in (sandbox, verdict list) order with their dates, so its
//   statistics are grouped as they are read instead of sorted (3x faster on 250,000 rows).
// No index of the pivot rows by id: a behaviour's own rows are those of its stored document's
// pivots (pivotKeysOf). That index was a third random-key B-tree for every commit to rewrite
// (20% of the index stage's CPU); a store that has it loses it here.
const INDEXES = `
CREATE INDEX IF NOT EXISTS behaviours_sha256 ON behaviours(sha256);
CREATE INDEX IF NOT EXISTS behaviours_md5 ON behaviours(md5);
CREATE INDEX IF NOT EXISTS behaviours_sha1 ON behaviours(sha1);
CREATE INDEX IF NOT EXISTS behaviours_by_date ON behaviours(analysis_date DESC, id, sandbox_name, verdicts);
CREATE INDEX IF NOT EXISTS behaviours_by_lmd ON behaviours(last_modification_date);
DROP INDEX IF EXISTS pivots_by_id;
CREATE INDEX IF NOT EXISTS pivots_groups ON pivots(kind, value, sandbox_name, verdicts, analysis_date);
`;

/** A lower-case hex digest of `n` digits at `path` of the stored document, else NULL (as metaOf's hexDigest). */
const digestFromDoc = (path: string, n: number): string =>
  `CASE WHEN json_type(doc, '${path}') = 'text' AND length(json_extract(doc, '${path}')) = ${n}
     AND lower(json_extract(doc, '${path}')) NOT GLOB '*[^0-9a-f]*' THEN lower(json_extract(doc, '${path}')) END`;

/**
 * The hunting columns computed from the stored document, exactly as metaOf computes them
 * (verdicts: strings only, unique, first-seen order). Used by the migration of an existing store
 * and for documents whose meta came from a chunk written before these fields existed.
 */
const HUNT_FROM_DOC = `
  verdicts = (SELECT json_group_array(value) FROM (
    SELECT value FROM json_each(doc, '$.attributes.verdicts') WHERE type = 'text' GROUP BY value ORDER BY min(key))),
  md5 = ${digestFromDoc('$.context_attributes.file_md5', 32)},
  sha1 = ${digestFromDoc('$.context_attributes.file_sha1', 40)}`;

/**
 * Adds the hunting columns to a store created before them and fills them from the stored
 * documents, in one immediate transaction (so two processes opening the store at once migrate it
 * once: the second finds the columns). A no-op on a current store.
 */
function migrateHuntColumns(db: Database): void {
  const missing = (): string[] => {
    const have = new Set((db.prepare('PRAGMA table_info(behaviours)').all() as { name: string }[]).map((c) => c.name));
    return ['verdicts', 'md5', 'sha1'].filter((c) => !have.has(c));
  };
  if (missing().length === 0) return;
  db.transaction(() => {
    const cols = missing();
    if (cols.length === 0) return;
    for (const c of cols)
      db.exec(`ALTER TABLE behaviours ADD COLUMN ${c === 'verdicts' ? "verdicts TEXT NOT NULL DEFAULT '[]'" : `${c} TEXT`}`);
    db.exec(`UPDATE behaviours SET ${HUNT_FROM_DOC}`);
  }).immediate();
}

/**
 * Gives the pivot rows of a store created before them their copies of the behaviours' hunting
 * columns: the table is rebuilt in key order from a join with the behaviours (faster than updating
 * each row in place), and the indexes the previous reads needed are dropped. One immediate
 * transaction, like migrateHuntColumns; a no-op on a current store.
 */
function migratePivotColumns(db: Database): void {
  const current = (): boolean =>
    (db.prepare('PRAGMA table_info(pivots)').all() as { name: string }[]).some((c) => c.name === 'analysis_date');
  if (current()) return;
  db.transaction(() => {
    if (current()) return;
    db.exec(`${PIVOTS_TABLE('pivots_next')}
      INSERT INTO pivots_next (kind, value, id, analysis_date, sandbox_name, verdicts)
        SELECT p.kind, p.value, p.id, b.analysis_date, b.sandbox_name, b.verdicts FROM pivots p JOIN behaviours b ON b.id = p.id
        ORDER BY p.kind, p.value, p.id;
      DROP TABLE pivots;
      ALTER TABLE pivots_next RENAME TO pivots;
      DROP INDEX IF EXISTS behaviours_hunt;
      DROP INDEX IF EXISTS behaviours_analysis_date;`);
  }).immediate();
}

/**
 * Runs the migrations with a long lock wait: a process opening the store while another migrates
 * it (a minute or more on millions of behaviours) waits for it to finish, then finds the store
 * current, instead of failing after the usual busy timeout.
 */
function migrating(db: Database, migrate: () => void): void {
  const usual = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma(`busy_timeout = ${MIGRATION_WAIT_MS}`);
  try {
    migrate();
  } finally {
    db.pragma(`busy_timeout = ${usual}`);
  }
}

/** How long opening a store waits for another process's migration of it. */
const MIGRATION_WAIT_MS = 30 * 60 * 1000;

/**
 * The embedded sink: one SQLite file, behaviours keyed by id, one row per (pivot kind, value,
 * id) so every pivot lookup is an index range scan.
 */
export class SqliteSink implements Sink {
  readonly kind = 'sqlite';
  private readonly upsertDoc: Statement;
  private readonly storedPivots: Statement;
  private readonly deletePivot: Statement;
  private readonly insertPivot: Statement;
  private readonly huntFromDoc: Statement;
  private readonly verdictsOf: Statement;

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
    if (!db.readonly) {
      db.exec(TABLES);
      migrating(db, () => {
        migrateHuntColumns(db);
        migratePivotColumns(db);
      });
      db.exec(INDEXES);
    }
    // Newer wins; an equal date rewrites the same state, which keeps replays idempotent.
    // CAST: JSON handed over as UTF-8 bytes is stored as TEXT, as it is, with no decoding in JS
    this.upsertDoc = db.prepare(`
      INSERT INTO behaviours (id, sha256, sandbox_name, analysis_date, last_modification_date, doc, indexed_at, verdicts, md5, sha1)
      VALUES (@id, @sha256, @sandbox_name, @analysis_date, @last_modification_date, CAST(@doc AS TEXT), @indexed_at, @verdicts, @md5, @sha1)
      ON CONFLICT(id) DO UPDATE SET
        sha256 = excluded.sha256, sandbox_name = excluded.sandbox_name, analysis_date = excluded.analysis_date,
        last_modification_date = excluded.last_modification_date, doc = excluded.doc, indexed_at = excluded.indexed_at,
        verdicts = excluded.verdicts, md5 = excluded.md5, sha1 = excluded.sha1
      WHERE excluded.last_modification_date >= behaviours.last_modification_date`);
    this.huntFromDoc = db.prepare(`UPDATE behaviours SET ${HUNT_FROM_DOC} WHERE id = ?`);
    this.verdictsOf = db.prepare('SELECT verdicts FROM behaviours WHERE id = ?').pluck();
    // only for a version the upsert below will replace: a stale replay does not parse the document
    this.storedPivots = db
      .prepare("SELECT CASE WHEN last_modification_date <= ? THEN json_extract(doc, '$.pivots') END FROM behaviours WHERE id = ?")
      .pluck();
    this.deletePivot = db.prepare('DELETE FROM pivots WHERE kind = ? AND value = ? AND id = ?');
    this.insertPivot = db.prepare(
      'INSERT OR IGNORE INTO pivots (kind, value, id, analysis_date, sandbox_name, verdicts) VALUES (?, ?, ?, ?, ?, ?)',
    );
  }

  async upsert(docs: readonly SinkDoc[]): Promise<ItemResult[]> {
    const now = Math.floor(Date.now() / 1000);
    // the retention cutoff of this call, read once (not per document)
    const cutoff = this.keptAfter?.();
    const write = this.db.transaction((items: readonly SinkDoc[]) => {
      const pending: PendingPivots = { rows: [], latest: new Map() };
      const results = items.map((doc, i) => this.writeOne(doc, now, cutoff, i, pending));
      this.insertPivots(pending, results);
      return results;
    });
    try {
      return write.immediate(docs);
    } catch (err) {
      return docs.map((d) => callFailed(err, d.meta.id, this.db.name));
    }
  }

  /**
   * Inserts a call's pivot rows in key order, after its documents: the B-tree is then walked left
   * to right once per call, instead of jumping to a random page per row and re-reading the pages
   * the cache dropped (1 GB minute, groups of 2,000: 28.6 → 12.8 GB written, 26.6 → 16–21 s).
   */
  private insertPivots({ rows, latest }: PendingPivots, results: ItemResult[]): void {
    rows.sort(byPivotKey);
    for (const r of rows) {
      // a behaviour stored twice in one call keeps only the rows of its version written last
      if (latest.get(r.id) !== r.item || results[r.item]?.status !== 'ok') continue;
      try {
        this.insertPivot.run(r.kind, r.value, r.id, r.date, r.sandbox, r.verdicts);
      } catch (err) {
        results[r.item] = rejectUnlessTransient(err, r.id);
      }
    }
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
      // the rows of the version this one replaces, if any (a new behaviour finds none)
      const before = this.storedPivots.get(doc.last_modification_date, doc.id) as string | null | undefined;
      const changed = this.upsertDoc.run({
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
      }).changes;
      if (changed === 0) return { id: doc.id, status: 'ok', stale: true };
      // a meta from a chunk older than the hunting fields: derive them from the document, as the migration does
      let listed = verdicts;
      if (!hunt) {
        this.huntFromDoc.run(doc.id);
        listed = this.verdictsOf.get(doc.id) as string;
      }
      if (typeof before === 'string') {
        for (const k of pivotKeysOf(JSON.parse(before) as Pivots)) this.deletePivot.run(k.kind, k.value, doc.id);
      }
      pending.latest.set(doc.id, index);
      for (const { kind, value } of pivotKeysOf(doc.pivots)) {
        pending.rows.push({ item: index, kind, value, id: doc.id, date: doc.analysis_date, sandbox: doc.sandbox_name, verdicts: listed });
      }
      return { id: doc.id, status: 'ok' };
    } catch (err) {
      return rejectUnlessTransient(err, doc.id);
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
