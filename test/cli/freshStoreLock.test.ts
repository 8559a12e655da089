import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { assertBlockedOn } from '../support/blockedOn.js';
import { runCli, startCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';

test(
  'a command opening a fresh store while another process holds its lock (workers started together) waits for it instead of failing with "database is locked"',
  { timeout: 60_000 },
  async () => {
    const file = join(tempDir(), 'fresh.db');
    // a new file, not yet in WAL mode, locked by another connection: SQLite refuses the switch to
    // WAL at once here, without its busy handler
    const db = new BetterSqlite3(file);
    db.exec('BEGIN IMMEDIATE');
    // a command that writes (a read never creates a store: it refuses a file holding none)
    const cli = startCli(['--store', `sqlite:${file}`, 'watch', 'add', 'w', '--behash', 'B', '--json'], { SANDTRAIL_LOG_LEVEL: 'warn' });
    await assertBlockedOn(cli.child, file, 3_000);
    db.exec('COMMIT');
    db.close();
    const r = await cli.exited;
    assert.equal(r.code, 0, r.stderr);
    const pivot = await runCli(['--store', `sqlite:${file}`, 'pivot', '--behash', 'B', '--json']);
    assert.equal(pivot.code, 0, pivot.stderr);
    assert.equal((JSON.parse(pivot.stdout) as { behaviours: number }).behaviours, 0);
    const after = new BetterSqlite3(file, { readonly: true });
    try {
      assert.equal(after.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      after.close();
    }
  },
);
