import type { Database } from 'better-sqlite3';
import { Partitions } from './Partitions.js';
import { LOCATOR, UNDATED, pivotsTable } from './partitionSchema.js';

/*
 * Sets up the embedded store's behaviours at open: creates the locator and the views of a new
 * store, and brings a store written by an older version up to date (its hunting columns, its
 * pivot rows' copies, then its single tables kept as the undated partition).
 */

// The indexes of a store from before the split by day, which its tables keep as the undated
// partition (partitionOf(UNDATED) names them); a store from before some of them gains them here.
const LEGACY_INDEXES = `
CREATE INDEX IF NOT EXISTS behaviours_sha256 ON behaviours(sha256);
CREATE INDEX IF NOT EXISTS behaviours_md5 ON behaviours(md5);
CREATE INDEX IF NOT EXISTS behaviours_sha1 ON behaviours(sha1);
CREATE INDEX IF NOT EXISTS behaviours_by_date ON behaviours(analysis_date DESC, id, sandbox_name, verdicts);
CREATE INDEX IF NOT EXISTS behaviours_by_lmd ON behaviours(last_modification_date);
DROP INDEX IF EXISTS pivots_by_id;
CREATE INDEX IF NOT EXISTS pivots_groups ON pivots(kind, value, sandbox_name, verdicts, analysis_date);
`;

/**
 * Makes the store current for writes: a no-op on a current store, one immediate transaction per
 * step otherwise (two processes opening a store at once migrate it once: the second finds it
 * done). Opening waits for another process's migration (migrating).
 */
export function setUpStore(db: Database): void {
  migrating(db, () => {
    if (kindOf(db, 'behaviours') === 'table') {
      // each step checks again under its lock: another process may have migrated the store meanwhile
      // (the single tables are then views, which take no index)
      stillLegacy(db, () => {
        if (kindOf(db, 'pivots') !== 'table') db.exec(pivotsTable('pivots'));
      });
      migrateHuntColumns(db);
      migratePivotColumns(db);
      stillLegacy(db, () => db.exec(LEGACY_INDEXES));
      splitByDay(db);
    }
    if (kindOf(db, 'behaviour_days') === 'table' && kindOf(db, 'behaviours') === 'view') return;
    db.transaction(() => {
      db.exec(LOCATOR);
      if (kindOf(db, 'behaviours') !== 'view' || kindOf(db, 'pivots') !== 'view') new Partitions(db).rebuildViews();
    }).immediate();
  });
}

/** `step` in an immediate transaction, if the store still has the single tables of before the split by day. */
function stillLegacy(db: Database, step: () => void): void {
  db.transaction(() => {
    if (kindOf(db, 'behaviours') === 'table') step();
  }).immediate();
}

/** Whether `name` is a table, a view, or nothing, in the main schema. */
function kindOf(db: Database, name: string): 'table' | 'view' | undefined {
  return db.prepare("SELECT type FROM sqlite_master WHERE name = ? AND type IN ('table', 'view')").pluck().get(name) as
    'table' | 'view' | undefined;
}

/**
 * Keeps the single tables of a store from before the split by day as its undated partition:
 * renamed, with every behaviour placed in the locator (in key order: one pass, no random
 * writes), behind the views. Nothing is copied: retention empties the partition by age like any
 * day, and a newer version of one of its behaviours moves to its day.
 */
function splitByDay(db: Database): void {
  db.transaction(() => {
    if (kindOf(db, 'behaviours') !== 'table') return;
    db.exec(`ALTER TABLE behaviours RENAME TO behaviours_undated;
      ALTER TABLE pivots RENAME TO pivots_undated;
      ${LOCATOR}
      INSERT INTO behaviour_days (id, day, last_modification_date)
        SELECT id, ${UNDATED}, last_modification_date FROM behaviours_undated ORDER BY id;`);
    new Partitions(db).rebuildViews();
  }).immediate();
}

/** A lower-case hex digest of `n` digits at `path` of the stored document, else NULL (as metaOf's hexDigest). */
const digestFromDoc = (path: string, n: number): string =>
  `CASE WHEN json_type(doc, '${path}') = 'text' AND length(json_extract(doc, '${path}')) = ${n}
     AND lower(json_extract(doc, '${path}')) NOT GLOB '*[^0-9a-f]*' THEN lower(json_extract(doc, '${path}')) END`;

/**
 * The hunting columns computed from the stored document, exactly as metaOf computes them
 * (verdicts: strings only, unique, first-seen order). Used by the migration of an existing store
 * and for documents whose meta came from a chunk written before these fields existed.
 */
export const HUNT_FROM_DOC = `
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
    db.exec(`${pivotsTable('pivots_next')}
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
