import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { assertBlockedOn } from '../support/blockedOn.js';
import { runCli, startCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { writePreviousLayout } from '../store/previousLayout.js';
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
    writePreviousLayout(db, [doc]);
    // hold the write lock for longer than the busy timeout of an ordinary open
    db.exec('BEGIN IMMEDIATE');
    const cli = startCli(['--store', `sqlite:${file}`, 'pivot', '--behash', 'B', '--json'], { SANDTRAIL_LOG_LEVEL: 'warn' });
    // it opened the store and is still waiting on it 17 s later, past the usual busy timeout
    await assertBlockedOn(cli.child, file, 17_000);
    db.exec('COMMIT');
    const r = await cli.exited;
    db.close();
    assert.equal(r.code, 0, r.stderr);
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

test(
  'commands opening a store of an older layout at once: one migrates it, the others wait and answer (one failed on the store migrated meanwhile)',
  { timeout: 180_000 },
  async () => {
    const file = join(tempDir(), 'old2.db');
    const docs = Array.from({ length: 2_000 }, (_, i) =>
      makeDoc(i.toString(16).padStart(64, '0'), i % 2 ? 'Zenbox' : 'CAPE Sandbox', 1000 + i, {
        behash: `b${i % 50}`,
        verdicts: ['MALWARE'],
      }),
    );
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    writePreviousLayout(db, docs);
    // all of them find the old layout, then wait for the lock to migrate it
    db.exec('BEGIN IMMEDIATE');
    const args = ['--store', `sqlite:${file}`, 'pivot', '--behash', 'b7', '--limit', '0', '--json'];
    const runs = [runCli(args), runCli(args), runCli(args)];
    await new Promise((resolve) => setTimeout(resolve, 4000));
    db.exec('COMMIT');
    db.close();
    const done = await Promise.all(runs);
    assert.deepEqual(
      done.map((r) => r.code),
      [0, 0, 0],
      done.map((r) => r.stderr).join('\n'),
    );
    for (const r of done) assert.equal((JSON.parse(r.stdout) as { behaviours: number }).behaviours, 40);
  },
);
