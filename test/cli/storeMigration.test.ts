import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { makeDoc } from '../store/sinkConformance.js';

test(
  'a command opening a store while another process holds it (as a migration does) waits past the usual 15 s busy timeout, then migrates and answers',
  { timeout: 120_000 },
  async () => {
    const file = join(tempDir(), 'old.db');
    const doc = makeDoc('e'.repeat(64), 'Zenbox', 1000, { behash: 'B', verdicts: ['MALWARE'] });
    // a store of the previous hunting layout (pivot rows without copies), in WAL mode like every store
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    db.exec(`
    CREATE TABLE behaviours (
      id TEXT PRIMARY KEY NOT NULL, sha256 TEXT NOT NULL, sandbox_name TEXT NOT NULL, analysis_date INTEGER,
      last_modification_date INTEGER NOT NULL, doc TEXT NOT NULL, indexed_at INTEGER NOT NULL,
      verdicts TEXT NOT NULL DEFAULT '[]', md5 TEXT, sha1 TEXT);
    CREATE TABLE pivots (kind TEXT NOT NULL, value TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (kind, value, id)) WITHOUT ROWID;
    CREATE INDEX pivots_by_id ON pivots(id);`);
    db.prepare('INSERT INTO behaviours VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)').run(
    doc.id, doc.sha256, doc.sandbox_name, doc.analysis_date, doc.last_modification_date, JSON.stringify(doc), 1, '["MALWARE"]',
  ); // prettier-ignore
    db.prepare('INSERT INTO pivots VALUES (?, ?, ?)').run('behash', 'b', doc.id);
    // hold the write lock for longer than the busy timeout of an ordinary open
    db.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    const pending = runCli(['--store', `sqlite:${file}`, 'pivot', '--behash', 'B', '--json']);
    await new Promise((resolve) => setTimeout(resolve, 17_000));
    db.exec('COMMIT');
    const r = await pending;
    db.close();
    assert.equal(r.code, 0, r.stderr);
    assert.ok(Date.now() - started >= 17_000);
    const stats = JSON.parse(r.stdout) as { behaviours: number; verdicts: { name: string; count: number }[]; newest: { id: string }[] };
    assert.deepEqual([stats.behaviours, stats.verdicts, stats.newest.map((l) => l.id)], [1, [{ name: 'MALWARE', count: 1 }], [doc.id]]);
    const after = new BetterSqlite3(file, { readonly: true });
    try {
      assert.deepEqual(after.prepare('SELECT sandbox_name, verdicts FROM pivots').all(), [
        { sandbox_name: 'Zenbox', verdicts: '["MALWARE"]' },
      ]);
    } finally {
      after.close();
    }
  },
);
