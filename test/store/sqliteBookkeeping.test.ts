import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { openStore, writeWhenFree } from '../../src/store/index.js';
import { tempDir } from '../support/env.js';
import { bookkeepingConformance } from './bookkeepingConformance.js';

const dir = tempDir();
let n = 0;

bookkeepingConformance('sqlite', async () => {
  const store = openStore(`sqlite:${join(dir, `b${n++}.db`)}`);
  return { sink: store.sink, dlq: store.dlq, batches: store.batches, close: () => store.close() };
});

test('batch log and dead-letter writes wait for another process holding the write lock without blocking the event loop', async () => {
  const file = join(dir, `lock${n++}.db`);
  const store = openStore(`sqlite:${file}`);
  // another connection, as the index worker's process would hold it while it commits
  const other = new BetterSqlite3(file);
  try {
    other.exec('BEGIN IMMEDIATE');
    let ticks = 0;
    const tick = setInterval(() => ticks++, 10);
    const started = Date.now();
    const entry = { batch: '202611010000', source: 'dir:/feed', status: 'ok' as const, lines: 1, accepted: 1, rejected: 0 };
    const recorded = store.batches.record({ ...entry, chunks: 0, bytesDecoded: 10, error: null, startedAt: 1, finishedAt: 2 });
    const lettered = store.dlq.put([
      {
        id: 'normalize:202611010000:1',
        stage: 'normalize',
        batch: '202611010000',
        line: 1,
        docId: null,
        code: 'not_json',
        path: '$',
        message: 'invalid JSON',
        raw: '{',
        rawEncoding: 'utf8',
        rawSize: 1,
        rawTruncated: false,
      },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    other.exec('COMMIT');
    await Promise.all([recorded, lettered]);
    clearInterval(tick);
    assert.ok(Date.now() - started >= 400);
    assert.ok(ticks >= 20, `the event loop ran while waiting (${ticks} ticks of 10 ms)`);
    assert.deepEqual(
      (await store.batches.get(['202611010000'])).map((b) => [b.batch, b.status, b.lines]),
      [['202611010000', 'ok', 1]],
    );
    assert.equal((await store.dlq.get('normalize:202611010000:1'))?.code, 'not_json');
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await store.close();
  }
});

test('a write still locked out when the busy timeout has passed fails with SQLITE_BUSY and leaves no transaction open', async () => {
  const file = join(dir, `lock${n++}.db`);
  const store = openStore(`sqlite:${file}`);
  const other = new BetterSqlite3(file);
  const own = new BetterSqlite3(file);
  try {
    own.pragma('busy_timeout = 200');
    other.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    await assert.rejects(
      writeWhenFree(own, () => own.prepare("INSERT INTO batch_chunks (batch, n) VALUES ('202611010000', 0)").run()),
      (err: { code?: string }) => err.code === 'SQLITE_BUSY',
    );
    assert.ok(Date.now() - started >= 200);
    assert.equal(own.inTransaction, false);
    assert.equal(own.pragma('busy_timeout', { simple: true }), 200);
    other.exec('COMMIT');
    await writeWhenFree(own, () => own.prepare("INSERT INTO batch_chunks (batch, n) VALUES ('202611010000', 0)").run());
    assert.deepEqual(await store.batches.storedChunks('202611010000', 1), [0]);
  } finally {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    own.close();
    await store.close();
  }
});
