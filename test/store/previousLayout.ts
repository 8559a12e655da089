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
