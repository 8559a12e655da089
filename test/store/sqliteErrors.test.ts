import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { isBusy, isTransientSqlite, openStore, sqliteStoreFault, SqliteSink } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { makeDoc, sinkDocs } from './sinkConformance.js';

const dir = tempDir();
let n = 0;
const err = (code: unknown): Error => Object.assign(new Error(String(code)), { code });

test('one table tells transient SQLite failures, store faults and document failures apart, extended codes included', () => {
  for (const code of ['SQLITE_BUSY_RECOVERY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED', 'SQLITE_LOCKED_SHAREDCACHE'])
    assert.equal(isTransientSqlite(err(code)), true, code);
  const faults: [string, string, RegExp][] = [
    // the lock held through the whole busy timeout: another process's, not a passing commit
    ['SQLITE_BUSY', 'STORE_LOCKED', /locked by another process/],
    ['SQLITE_BUSY_TIMEOUT', 'STORE_LOCKED', /locked by another process/],
    ['SQLITE_FULL', 'STORE_FULL', /disk full/],
    // a read on a full disk: the -shm file beside a WAL store cannot grow
    ['SQLITE_IOERR_SHMSIZE', 'STORE_FULL', /disk full \(SQLite could not extend the -shm file/],
    ['SQLITE_IOERR_FSYNC', 'STORE_IO', /I\/O error/],
    ['SQLITE_IOERR_WRITE', 'STORE_IO', /I\/O error/],
    ['SQLITE_CORRUPT', 'STORE_DAMAGED', /damaged/],
    ['SQLITE_CORRUPT_INDEX', 'STORE_DAMAGED', /damaged/],
    ['SQLITE_NOTADB', 'STORE_DAMAGED', /not a SQLite database/],
    ['SQLITE_READONLY', 'STORE_READONLY', /read-only/],
    ['SQLITE_READONLY_DBMOVED', 'STORE_READONLY', /read-only/],
    ['SQLITE_CANTOPEN', 'STORE_READONLY', /cannot open/],
    ['SQLITE_PERM', 'STORE_READONLY', /permission denied/],
  ];
  for (const [code, fault, words] of faults) {
    assert.equal(isTransientSqlite(err(code)), false, code);
    const e = sqliteStoreFault(err(code), '/data/store.db');
    assert.equal(e?.code, fault, code);
    assert.match(e?.message ?? '', words);
    assert.match(e?.message ?? '', /\/data\/store\.db/, 'the store is named');
  }
  // what the document holds is the document's: no store fault, not transient
  for (const code of [
    'SQLITE_ERROR',
    'SQLITE_CONSTRAINT_PRIMARYKEY',
    'SQLITE_TOOBIG',
    'SQLITE_MISMATCH',
    'SQLITE_BUSYNESS',
    'BUSY',
    undefined,
    42,
  ]) {
    assert.equal(isTransientSqlite(err(code)), false, String(code));
    assert.equal(sqliteStoreFault(err(code), '/x.db'), undefined, String(code));
  }
  assert.equal(isTransientSqlite(null), false);
  assert.equal(isBusy(err('SQLITE_BUSY_RECOVERY')), true);
  assert.equal(isBusy(err('SQLITE_LOCKED')), false);
});

test("a write lock another connection holds through the busy timeout is the store's fault: STORE_LOCKED naming the file, nothing written", async () => {
  const file = join(dir, `lock${n++}.db`);
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 50');
  const sink = new SqliteSink(db);
  const other = new BetterSqlite3(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    const docs = [makeDoc('a'.repeat(64), 'Zenbox', 1000, { behash: 'x' }), makeDoc('b'.repeat(64), 'Zenbox', 1000, { behash: 'x' })];
    await assert.rejects(
      sink.upsert(sinkDocs(docs)),
      (e: Error & { code?: string }) => e.code === 'STORE_LOCKED' && e.message.includes(file) && /fuser/.test(e.message),
    );
    other.exec('ROLLBACK');
    assert.equal(await sink.count(), 0);

    // the wait for the lock leaves the event loop free: timers (a health probe, a signal) still run
    db.pragma('busy_timeout = 1000');
    other.exec('BEGIN IMMEDIATE');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    const waited = sink.upsert(sinkDocs(docs));
    setTimeout(() => other.exec('ROLLBACK'), 500);
    assert.deepEqual(
      (await waited).map((r) => r.status),
      ['ok', 'ok'],
    );
    clearInterval(ticker);
    assert.ok(ticks >= 10, `${ticks} timer ticks while the lock was held for 500 ms`);
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

test("an I/O error from SQLite is the store's fault: the call throws STORE_IO, no document is rejected", async () => {
  const db = new BetterSqlite3(join(dir, `ioerr${n++}.db`));
  const sink = new SqliteSink(db);
  // the call's commit fails as SQLite reports a failed fsync (not reproducible on demand)
  const failing = new Proxy(db, {
    get(target, prop) {
      if (prop !== 'exec') {
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      }
      return (sql: string) => {
        if (sql === 'COMMIT') throw err('SQLITE_IOERR_FSYNC');
        return target.exec(sql);
      };
    },
  });
  Object.assign(sink, { db: failing });
  try {
    await assert.rejects(sink.upsert(sinkDocs([makeDoc('c'.repeat(64), 'Zenbox', 1000, {})])), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'STORE_IO');
      return true;
    });
  } finally {
    db.close();
  }
});

test('a full disk (max_page_count reached) fails the whole call with STORE_FULL naming the file; nothing is rejected, and the same call passes once there is room', async () => {
  const file = join(dir, `full${n++}.db`);
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  const sink = new SqliteSink(db);
  try {
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 2}`);
    const docs = Array.from({ length: 60 }, (_, i) =>
      makeDoc(i.toString(16).padStart(64, '0'), 'Zenbox', 1000, { behash: `h${i}`, dropped_sha256: [`${i}`.padStart(64, 'd')] }),
    );
    const big = docs.map((d) => ({ ...d, attributes: { ...d.attributes, padding: 'x'.repeat(20_000) } }));
    await assert.rejects(sink.upsert(sinkDocs(big)), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'STORE_FULL');
      assert.match(e.message, /disk full/);
      assert.ok(e.message.includes(file), e.message);
      return true;
    });
    assert.equal(await sink.count(), 0, 'the call rolled back whole');
    db.pragma('max_page_count = 1073741823');
    assert.deepEqual(new Set((await sink.upsert(sinkDocs(big))).map((r) => r.status)), new Set(['ok']));
    assert.equal(await sink.count(), 60);
  } finally {
    db.close();
  }
});

test("a day's table dropped by hand is the store's fault: the write throws STORE_DAMAGED and dead-letters nothing; doctor fails naming it", async () => {
  const file = join(dir, `lost${n++}.db`);
  const day = 1_793_491_200 + 3600;
  const store = openStore(`sqlite:${file}`);
  try {
    await store.sink.upsert(sinkDocs([makeDoc('a'.repeat(64), 'Zenbox', day, {})]));
  } finally {
    await store.close();
  }
  const db = new BetterSqlite3(file);
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'pivots_2%'").pluck().get() as string;
  db.exec(`DROP TABLE ${table}`);
  db.close();
  const again = openStore(`sqlite:${file}`);
  try {
    await assert.rejects(again.sink.upsert(sinkDocs([makeDoc('b'.repeat(64), 'Zenbox', day + 60, {})])), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'STORE_DAMAGED');
      assert.match(e.message, new RegExp(`the store lacks a table or column it needs .*no such table: ${table}`));
      return true;
    });
    assert.equal(await again.dlq.count(), 0, 'no record blamed');
  } finally {
    await again.close();
  }
  const doctor = await runCli(['doctor', '--json', '--store', `sqlite:${file}`]);
  const check = (JSON.parse(doctor.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks.find(
    (c) => c.id === 'store.integrity',
  );
  assert.equal(check?.status, 'fail', doctor.stdout);
  assert.match(check?.detail ?? '', new RegExp(`lacks parts of its store \\(no such table: main\\.${table}`));
});
