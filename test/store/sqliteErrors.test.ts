import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { isBusy, isTransientSqlite, SqliteSink } from '../../src/store/index.js';
import { tempDir } from '../support/env.js';
import { makeDoc, sinkDocs } from './sinkConformance.js';

const dir = tempDir();
let n = 0;
const err = (code: unknown): Error => Object.assign(new Error(String(code)), { code });

test('transient SQLite failures are told by their primary code, extended codes included', () => {
  for (const code of [
    'SQLITE_BUSY',
    'SQLITE_BUSY_RECOVERY',
    'SQLITE_BUSY_SNAPSHOT',
    'SQLITE_BUSY_TIMEOUT',
    'SQLITE_LOCKED',
    'SQLITE_LOCKED_SHAREDCACHE',
    'SQLITE_FULL',
    'SQLITE_IOERR',
    'SQLITE_IOERR_FSYNC',
    'SQLITE_IOERR_WRITE',
  ])
    assert.equal(isTransientSqlite(err(code)), true, code);
  for (const code of [
    'SQLITE_ERROR',
    'SQLITE_CONSTRAINT_PRIMARYKEY',
    'SQLITE_TOOBIG',
    'SQLITE_CORRUPT',
    'SQLITE_BUSYNESS',
    'BUSY',
    undefined,
    42,
  ])
    assert.equal(isTransientSqlite(err(code)), false, String(code));
  assert.equal(isTransientSqlite(null), false);
  assert.equal(isBusy(err('SQLITE_BUSY_RECOVERY')), true);
  assert.equal(isBusy(err('SQLITE_LOCKED')), false);
});

test('a write lock held by another connection makes the whole call retryable, and nothing is written', async () => {
  const file = join(dir, `lock${n++}.db`);
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 50');
  const sink = new SqliteSink(db);
  const other = new BetterSqlite3(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    const docs = [makeDoc('a'.repeat(64), 'Zenbox', 1000, { behash: 'x' }), makeDoc('b'.repeat(64), 'Zenbox', 1000, { behash: 'x' })];
    const res = await sink.upsert(sinkDocs(docs));
    assert.deepEqual(
      res.map((r) => [r.status, r.status === 'retryable' ? r.code : '']),
      [
        ['retryable', 'SQLITE_BUSY'],
        ['retryable', 'SQLITE_BUSY'],
      ],
    );
    other.exec('ROLLBACK');
    assert.equal(await sink.count(), 0);
    assert.deepEqual(
      (await sink.upsert(sinkDocs(docs))).map((r) => r.status),
      ['ok', 'ok'],
    );
    assert.deepEqual(await sink.query('behash', 'x'), docs.map((d) => d.id).sort());
  } finally {
    other.close();
    db.close();
  }
});

test('an extended I/O error code from SQLite is retryable too, not a rejected document', async () => {
  const db = new BetterSqlite3(join(dir, `ioerr${n++}.db`));
  const sink = new SqliteSink(db);
  // the transaction of the call fails as SQLite reports a failed fsync (not reproducible on demand)
  const failing = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'transaction') return Reflect.get(target, prop, receiver) as unknown;
      return () =>
        Object.assign(() => undefined, {
          immediate: () => {
            throw err('SQLITE_IOERR_FSYNC');
          },
        });
    },
  });
  Object.assign(sink, { db: failing });
  try {
    const res = await sink.upsert(sinkDocs([makeDoc('c'.repeat(64), 'Zenbox', 1000, {})]));
    assert.deepEqual(
      res.map((r) => [r.status, r.status === 'retryable' ? r.code : '']),
      [['retryable', 'SQLITE_IOERR_FSYNC']],
    );
  } finally {
    db.close();
  }
});
