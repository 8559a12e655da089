import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { describe, test } from 'vitest';
import type { Config } from '../../src/config/index.js';
import { errorCode, SandtrailError } from '../../src/errors/index.js';
import { IndexThread, IndexWorker } from '../../src/indexing/index.js';
import { createLogger } from '../../src/log/index.js';
import {
  createQueues,
  MemoryChunkTransport,
  RedisChunkTransport,
  type ChunkTransport,
  type HandoffMessage,
  type Queues,
} from '../../src/queue/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import type { SinkDoc } from '../../src/wire/index.js';
import { tempDir, testConfig } from '../support/env.js';
import { storeContents } from '../support/storeContents.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';

const log = createLogger('silent');
const NOW = Math.floor(Date.now() / 1000);
const sha = (i: number): string => i.toString(16).padStart(64, '0');

/** `count` documents of distinct files, numbered from `from`. */
function chunkOf(from: number, count: number): SinkDoc[] {
  return sinkDocs(Array.from({ length: count }, (_, i) => makeDoc(sha(from + i), 'Zenbox', NOW, { behash: `b${from + i}` })));
}

interface Running {
  transport: ChunkTransport;
  stop(): Promise<void>;
}

/** Each transport with the index stage it hands chunks to, as a process runs them. */
const transports: [string, (config: Config, store: Store, queues: Queues) => Running][] = [
  [
    'redis (index jobs, an index worker on the queue)',
    (config, store, queues) => {
      const worker = new IndexWorker({ redisUrl: config.redisUrl as string, config, store, queues, log });
      worker.start();
      return { transport: new RedisChunkTransport(queues, config, log), stop: () => worker.stop() };
    },
  ],
  [
    'memory (the index thread of this process)',
    (config) => {
      const thread = new IndexThread({ redisUrl: config.redisUrl as string, config, log });
      thread.start();
      return { transport: thread.transport, stop: () => thread.stop() };
    },
  ],
  [
    'memory (the index thread of a process on a private Redis: no queue consumer)',
    (config) => {
      const thread = new IndexThread({ redisUrl: config.redisUrl as string, config, log, consumeQueue: false });
      thread.start();
      return { transport: thread.transport, stop: () => thread.stop() };
    },
  ],
];

describe('chunk transport conformance', () => {
  for (const [name, make] of transports)
    test(`${name}: every chunk of a batch is stored once and marked in the batch log; the same chunks again change nothing`, async () => {
      const dir = tempDir();
      const file = join(dir, 'store.db');
      const config = await testConfig(dir, { store: `sqlite:${file}` });
      const store = openStore(config.store, config);
      const queues = createQueues(config.redisUrl as string, config, log);
      const running = make(config, store, queues);
      try {
        const batch = '202611250000';
        const chunks = [chunkOf(0, 7), chunkOf(7, 7), chunkOf(14, 3)];
        for (let round = 0; round < 2; round++) {
          // a fresh copy each round: a transport may take the documents' bytes
          const copies = round === 0 ? chunks : [chunkOf(0, 7), chunkOf(7, 7), chunkOf(14, 3)];
          const end = await running.transport.begin();
          for (const [n, docs] of copies.entries()) await running.transport.emit(batch, n, docs);
          end();
          await running.transport.settle(batch);
          if (running.transport.kind === 'memory') {
            // settle's promise: the chunks are committed when it resolves
            assert.deepEqual(await store.batches.storedChunks(batch, 3), [0, 1, 2]);
          }
          for (let i = 0; i < 400 && (await store.batches.storedChunks(batch, 3)).length < 3; i++) await sleep(25);
          assert.deepEqual(await store.batches.storedChunks(batch, 3), [0, 1, 2]);
          assert.equal(await store.batches.storedRecords(batch, 3), 17);
        }
        const held = storeContents(file);
        assert.deepEqual(held.ids, Array.from({ length: 17 }, (_, i) => `${sha(i)}_Zenbox`).sort());
        assert.equal(held.dead.length, 0);
      } finally {
        await running.stop();
        await queues.close();
        await store.close();
      }
    });
});

/** A memory transport whose index stage is the test: it sees every message and answers by hand. */
function handTransport(maxBytes: number): { t: MemoryChunkTransport; sent: HandoffMessage[] } {
  const sent: HandoffMessage[] = [];
  const t = new MemoryChunkTransport((m) => void sent.push(m), maxBytes);
  return { t, sent };
}

const chunkIds = (sent: HandoffMessage[]): number[] => sent.flatMap((m) => (m.type === 'chunk' ? [m.id] : []));

describe('the in-memory transport', () => {
  test('bounds the bytes in flight: a chunk waits until the index stage answers for earlier ones, and asks it to commit meanwhile', async () => {
    const docs = chunkOf(100, 5);
    const bytes = docs.reduce((s, d) => s + Buffer.byteLength(d.json), 0);
    const { t, sent } = handTransport(bytes * 1.5);
    await t.emit('b', 0, docs);
    let second = false;
    const job = new AbortController();
    const p = t.emit('b', 1, chunkOf(105, 5), job.signal).then(() => (second = true));
    await sleep(50);
    assert.equal(second, false, 'the second chunk waits: the first is still in flight');
    assert.deepEqual(chunkIds(sent), [1]);
    assert.ok(
      sent.some((m) => m.type === 'flush'),
      'the waiting producer asks for a commit',
    );
    t.done({ type: 'chunkDone', id: 1 });
    await p;
    assert.deepEqual(chunkIds(sent), [1, 2]);
    assert.equal(getEventListeners(job.signal, 'abort').length, 0, "a wait leaves no listener on the job's signal");
    // one chunk larger than the bound still goes when nothing else is in flight
    const { t: small, sent: smallSent } = handTransport(10);
    await small.emit('b', 0, docs);
    assert.deepEqual(chunkIds(smallSent), [1]);
  });

  test("settle resolves once every chunk of the batch is answered, and rejects with the store's error when one failed", async () => {
    const { t } = handTransport(1e9);
    await t.emit('a', 0, chunkOf(200, 2));
    await t.emit('a', 1, chunkOf(202, 2));
    await t.emit('b', 0, chunkOf(204, 2));
    let settled = false;
    const a = t.settle('a').then(() => (settled = true));
    t.done({ type: 'chunkDone', id: 1 });
    await sleep(20);
    assert.equal(settled, false, 'chunk 1 of a is not answered yet');
    t.done({ type: 'chunkDone', id: 2 });
    await a;
    const b = t.settle('b');
    t.done({ type: 'chunkDone', id: 3, error: { code: 'STORE_FULL', message: 'database or disk is full' } });
    await assert.rejects(b, (err: unknown) => errorCode(err) === 'STORE_FULL' && /disk is full/.test(String(err)));
  });

  test('producers read one at a time, and a settled batch waits for the reader to be committed with its chunks', async () => {
    const { t, sent } = handTransport(1e9);
    const flushes = (): number => sent.filter((m) => m.type === 'flush').length;
    const endA = await t.begin();
    let bBegun = false;
    const bTurn = t.begin().then((end) => ((bBegun = true), end));
    await sleep(20);
    assert.equal(bBegun, false, 'a second producer waits while the first reads');
    await t.emit('a', 0, chunkOf(400, 2));
    endA();
    const endB = await bTurn;
    assert.equal(bBegun, true, "the first producer's end lets the second read");
    const cTurn = t.begin();
    // a settles while b reads: no commit yet, so b's chunks can share it
    const settleA = t.settle('a');
    await sleep(20);
    assert.equal(flushes(), 0, 'a waits for the producer still reading');
    await t.emit('b', 0, chunkOf(402, 2));
    endB();
    const endC = await cTurn;
    // b settles while c reads: two batches wait, so they are committed now
    const settleB = t.settle('b');
    assert.equal(flushes(), 1, 'two settled batches are committed together');
    t.done({ type: 'chunkDone', id: 1 });
    t.done({ type: 'chunkDone', id: 2 });
    await Promise.all([settleA, settleB]);
    // c settles with no one reading: committed at once
    await t.emit('c', 0, chunkOf(404, 2));
    endC();
    endC();
    const settleC = t.settle('c');
    assert.equal(flushes(), 2, 'the last batch is committed at once');
    t.done({ type: 'chunkDone', id: 3 });
    await settleC;
    // a reader that ends without settling (its job failed) releases the batch waiting for it
    const endX = await t.begin();
    const dTurn = t.begin();
    await t.emit('e', 0, chunkOf(406, 2));
    endX();
    const endD = await dTurn;
    const settleE = t.settle('e');
    assert.equal(flushes(), 2, 'e waits for d, still reading');
    endD();
    assert.equal(flushes(), 3, "the reader's end commits the batch that waited for it");
    t.done({ type: 'chunkDone', id: 4 });
    await settleE;
  });

  test('a failed index stage fails every open chunk and every later one', async () => {
    const { t } = handTransport(1e9);
    await t.emit('a', 0, chunkOf(300, 2));
    const settling = t.settle('a');
    t.fail(new SandtrailError('INDEX_THREAD_FAILED', 'the index thread exited'));
    await assert.rejects(settling, (err: unknown) => errorCode(err) === 'INDEX_THREAD_FAILED');
    await assert.rejects(t.emit('a', 1, chunkOf(302, 2)), (err: unknown) => errorCode(err) === 'INDEX_THREAD_FAILED');
    assert.equal(t.pending, 0);
  });

  test('an index thread that dies with chunks in hand fails their batch (INDEX_THREAD_FAILED), never reports it stored', async () => {
    const dir = tempDir();
    const file = join(dir, 'store.db');
    const config = await testConfig(dir, { store: `sqlite:${file}`, index: { commitWaitMs: 5000 } });
    const thread = new IndexThread({ redisUrl: config.redisUrl as string, config, log });
    thread.start();
    const batch = '202611250001';
    // held for a larger commit (commitWaitMs), not yet written, when the thread is killed
    for (let n = 0; n < 4; n++) await thread.transport.emit(batch, n, chunkOf(400 + n * 10, 10));
    await (thread as unknown as { thread: Worker }).thread.terminate();
    await assert.rejects(thread.transport.settle(batch), (err: unknown) => errorCode(err) === 'INDEX_THREAD_FAILED');
    await assert.rejects(thread.transport.emit(batch, 4, chunkOf(500, 1)), (err: unknown) => errorCode(err) === 'INDEX_THREAD_FAILED');
    await thread.stop();
    const store = openStore(config.store, config);
    try {
      assert.deepEqual(await store.batches.storedChunks(batch, 5), [], 'no chunk of the batch is marked stored');
    } finally {
      await store.close();
    }
  });

  test('an index thread takes the index jobs queued in Redis, unless its Redis is private (nothing else can queue them)', async () => {
    const dir = tempDir();
    const file = join(dir, 'store.db');
    const config = await testConfig(dir, { store: `sqlite:${file}` });
    const store = openStore(config.store, config);
    const queues = createQueues(config.redisUrl as string, config, log);
    const redisUrl = config.redisUrl as string;
    const queued = '202611250002';
    const handed = '202611250003';
    try {
      // an index job in Redis, as a fleet's feed worker (or an earlier run) leaves one
      await new RedisChunkTransport(queues, config, log).emit(queued, 0, chunkOf(600, 3));
      const own = new IndexThread({ redisUrl, config, log, consumeQueue: false });
      own.start();
      try {
        await own.transport.emit(handed, 0, chunkOf(700, 2));
        await own.transport.settle(handed);
        assert.deepEqual(await store.batches.storedChunks(handed, 1), [0], 'the chunk handed in memory is stored');
        // time enough for a consumer to take a waiting job (it starts ~0.2 s after the thread)
        await sleep(1500);
        assert.deepEqual(await store.batches.storedChunks(queued, 1), [], 'the queued chunk is left alone');
        assert.equal(await queues.index.getWaitingCount(), 1);
      } finally {
        await own.stop();
      }
      const consuming = new IndexThread({ redisUrl, config, log });
      consuming.start();
      try {
        for (let i = 0; i < 400 && (await store.batches.storedChunks(queued, 1)).length === 0; i++) await sleep(25);
        assert.deepEqual(await store.batches.storedChunks(queued, 1), [0], 'a thread that consumes the queue stores it');
      } finally {
        await consuming.stop();
      }
      assert.deepEqual(storeContents(file).ids, [...[600, 601, 602], ...[700, 701]].map((i) => `${sha(i)}_Zenbox`).sort());
    } finally {
      await queues.close();
      await store.close();
    }
  });
});
