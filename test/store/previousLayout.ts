import type { Database } from 'better-sqlite3';
import type { BehaviourDoc } from '../../src/normalize/index.js';

/**
 * Writes `docs` as the previous hunting layout stored them (commit 3acdb2f): the hunting columns
 * on the behaviours, pivot rows without copies (their behash only), the covering index of the
 * hunting columns and the date index.
 */
export function writePreviousLayout(db: Database, docs: readonly BehaviourDoc[]): void {
  db.exec(`
    CREATE TABLE behaviours (
      id TEXT PRIMARY KEY NOT NULL, sha256 TEXT NOT NULL, sandbox_name TEXT NOT NULL, analysis_date INTEGER,
      last_modification_date INTEGER NOT NULL, doc TEXT NOT NULL, indexed_at INTEGER NOT NULL,
      verdicts TEXT NOT NULL DEFAULT '[]', md5 TEXT, sha1 TEXT);
    CREATE TABLE pivots (kind TEXT NOT NULL, value TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (kind, value, id)) WITHOUT ROWID;
    CREATE INDEX behaviours_analysis_date ON behaviours(analysis_date DESC, id);
    CREATE INDEX behaviours_hunt ON behaviours(id, analysis_date, sandbox_name, verdicts);
    CREATE INDEX pivots_by_id ON pivots(id);`);
  const behaviour = db.prepare('INSERT INTO behaviours VALUES (?, ?, ?, ?, ?, ?, 1, ?, NULL, NULL)');
  const pivot = db.prepare("INSERT INTO pivots VALUES ('behash', ?, ?)");
  for (const d of docs) {
    const verdicts = JSON.stringify(d.attributes.verdicts ?? []);
    behaviour.run(d.id, d.sha256, d.sandbox_name, d.analysis_date, d.last_modification_date, JSON.stringify(d), verdicts);
    if (d.pivots.behash) pivot.run(d.pivots.behash.toLowerCase(), d.id);
  }
}

/**
 * Creates the day partition `suffix` (e.g. 2026_11_01) as stores made it before pivot rows were
 * keyed in the groups' order: pivot rows keyed (kind, value, id) with a groups index beside them,
 * and the views over it alone (the store rebuilds them when it adds a day).
 */
export function writeKeyedDay(db: Database, suffix: string): void {
  const b = `behaviours_${suffix}`;
  const p = `pivots_${suffix}`;
  db.exec(`
    CREATE TABLE ${b} (
      id TEXT PRIMARY KEY NOT NULL, sha256 TEXT NOT NULL, sandbox_name TEXT NOT NULL, analysis_date INTEGER,
      last_modification_date INTEGER NOT NULL, doc TEXT NOT NULL, indexed_at INTEGER NOT NULL,
      verdicts TEXT NOT NULL DEFAULT '[]', md5 TEXT, sha1 TEXT);
    CREATE TABLE ${p} (
      kind TEXT NOT NULL, value TEXT NOT NULL, id TEXT NOT NULL, analysis_date INTEGER,
      sandbox_name TEXT NOT NULL DEFAULT '', verdicts TEXT NOT NULL DEFAULT '[]',
      PRIMARY KEY (kind, value, id)) WITHOUT ROWID;
    CREATE INDEX ${b}_sha256 ON ${b}(sha256);
    CREATE INDEX ${b}_md5 ON ${b}(md5);
    CREATE INDEX ${b}_sha1 ON ${b}(sha1);
    CREATE INDEX ${b}_by_date ON ${b}(analysis_date DESC, id, sandbox_name, verdicts);
    CREATE INDEX ${b}_by_lmd ON ${b}(last_modification_date);
    CREATE INDEX ${p}_groups ON ${p}(kind, value, sandbox_name, verdicts, analysis_date);
    DROP VIEW IF EXISTS behaviours;
    DROP VIEW IF EXISTS pivots;
    CREATE VIEW behaviours AS SELECT id, sha256, sandbox_name, analysis_date, last_modification_date, doc, indexed_at, verdicts, md5, sha1 FROM ${b};
    CREATE VIEW pivots AS SELECT kind, value, id, analysis_date, sandbox_name, verdicts FROM ${p};`);
}
