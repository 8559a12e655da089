import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { runBackfillCommand } from '../../src/cli/index.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { createQueues } from '../../src/queue/index.js';
import { runBackfill } from '../../src/runner/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { tempDir, uniquePrefix } from '../support/env.js';
import { RedisServer } from '../support/redisServer.js';
import { assertNewestWins, expectedDead, storeContents, storedCount } from '../support/storeContents.js';
import { addMinutes } from '../../src/minute/index.js';

const minutes = 10;
const start = '202611030000';

/** Backfills a multi-minute feed through a Redis the test breaks midway with `fault`. */
async function backfillThrough(fault: (redis: RedisServer) => Promise<void>, aof: boolean) {
  const dir = tempDir();
  const manifest = await writeFeed({ out: join(dir, 'feed'), seed: 41, start, minutes, perMinute: 80, malformedRate: 0.03 });
  const redis = await RedisServer.start({ aof });
  const file = join(dir, 'store.db');
  try {
    const config = loadConfig({
      flags: {
        redisUrl: redis.url,
        queuePrefix: uniquePrefix(),
        store: `sqlite:${file}`,
        logLevel: 'silent',
        feed: { backoffMs: 100 },
        index: { chunkMaxDocs: 10, highWaterChunks: 2, backoffMs: 50 },
        worker: { lockDurationMs: 3000, stalledIntervalMs: 1000 },
      },
    });
    const run = runBackfillCommand(
      { source: `dir:${join(dir, 'feed')}`, from: start, to: addMinutes(start, minutes - 1) },
      {
        config,
        log: createLogger('silent'),
      },
    );
    // break Redis once indexing is under way, not before or after
    for (let i = 0; i < 400 && storedCount(file) < manifest.expectedIds.length / 5; i++) await sleep(25);
    const midway = storedCount(file);
    assert.ok(
      midway > 0 && midway < manifest.expectedIds.length,
      `Redis broken mid-run (${midway} of ${manifest.expectedIds.length} stored)`,
    );
    await fault(redis);
    const result = await run;
    return { result, manifest, contents: storeContents(file) };
  } finally {
    await redis.stop();
  }
}

test('Redis killed -9 and restarted with AOF: the backfill finishes with nothing lost', async () => {
  const { result, manifest, contents } = await backfillThrough(async (redis) => {
    await redis.kill();
    await sleep(300);
    await redis.restart();
  }, true);
  assert.deepEqual(result.summary.batches, { ok: minutes, empty: 0, missing: 0, failed: 0, pending: 0 });
  assert.deepEqual(contents.ids, manifest.expectedIds);
  assert.deepEqual(contents.dead, expectedDead(manifest));
  assertNewestWins(manifest, contents.lmd);
});

for (const [name, fault] of [
  ['restarted empty (no persistence)', (redis: RedisServer) => redis.restart({ empty: true })],
  [
    'flushed (FLUSHALL)',
    async (redis: RedisServer) => {
      const { Redis } = await import('ioredis');
      const c = new Redis(redis.url);
      await c.flushall();
      c.disconnect();
    },
  ],
] as const)
  test(`Redis ${name} mid-run: the lost jobs are enqueued again, never reported ok while missing`, async () => {
    const { result, manifest, contents } = await backfillThrough(fault, false);
    assert.ok(result.summary.requeued > 0, `lost feed jobs were enqueued again (${result.summary.requeued})`);
    assert.deepEqual(result.summary.batches, { ok: minutes, empty: 0, missing: 0, failed: 0, pending: 0 });
    assert.deepEqual(contents.ids, manifest.expectedIds, 'every record is in the store');
    assert.deepEqual(contents.dead, expectedDead(manifest));
    assertNewestWins(manifest, contents.lmd);
  });

test('a job Redis keeps losing is enqueued again maxRequeues times, then its minute is reported failed with QUEUE_STATE_LOST', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  await writeFeed({ out: feed, seed: 5, start, minutes: 2, perMinute: 5, malformedRate: 0 });
  const redis = await RedisServer.start({ aof: false });
  const config = loadConfig({
    flags: { redisUrl: redis.url, queuePrefix: uniquePrefix(), store: `sqlite:${join(dir, 'lost.db')}`, logLevel: 'silent' },
  });
  const store = openStore(config.store, config);
  const queues = createQueues(redis.url, config);
  const { Redis } = await import('ioredis');
  const flusher = new Redis(redis.url);
  // no worker takes the jobs, and Redis forgets them over and over
  let flushing = true;
  const flushes = (async () => {
    while (flushing) {
      await flusher.flushall();
      await sleep(60);
    }
  })();
  try {
    const summary = await runBackfill({
      queues,
      store,
      sourceSpec: `dir:${feed}`,
      minutes: [start, addMinutes(start, 1)],
      pollMs: 30,
      maxRequeues: 2,
    });
    assert.deepEqual(summary.batches, { ok: 0, empty: 0, missing: 0, failed: 2, pending: 0 });
    assert.equal(summary.requeued, 4, 'each of the two minutes was enqueued again twice');
    assert.deepEqual(
      summary.failures.map((f) => [f.batch, f.reason.split(':')[0]]),
      [
        [start, 'QUEUE_STATE_LOST'],
        [addMinutes(start, 1), 'QUEUE_STATE_LOST'],
      ],
    );
    // no job ever wrote a row for them: the run does, so the store's batch log agrees with the summary
    assert.deepEqual(
      (await store.batches.get([start, addMinutes(start, 1)])).map((e) => [e.batch, e.status, e.error?.split(':')[0]]),
      [
        [start, 'failed', 'QUEUE_STATE_LOST'],
        [addMinutes(start, 1), 'failed', 'QUEUE_STATE_LOST'],
      ],
    );
  } finally {
    flushing = false;
    await flushes;
    flusher.disconnect();
    await queues.close();
    await store.close();
    await redis.stop();
  }
});

test('a Redis that is gone for good ends a waiting backfill after worker.redisWaitMs, its minutes failed with REDIS_UNAVAILABLE', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  await writeFeed({ out: feed, seed: 6, start, minutes: 2, perMinute: 5, malformedRate: 0 });
  const redis = await RedisServer.start({ aof: false });
  const config = loadConfig({
    flags: { redisUrl: redis.url, queuePrefix: uniquePrefix(), store: `sqlite:${join(dir, 'gone.db')}`, logLevel: 'silent' },
  });
  const store = openStore(config.store, config);
  const queues = createQueues(redis.url, config);
  try {
    // no worker takes the jobs; Redis dies once they are queued and never comes back
    const done = runBackfill({
      queues,
      store,
      sourceSpec: `dir:${feed}`,
      minutes: [start, addMinutes(start, 1)],
      pollMs: 30,
      // longer than a poll's own 10 s stall: the wait counts from the unanswered poll, not from its stall
      redisWaitMs: 11_000,
    });
    await sleep(300);
    await redis.kill();
    const started = Date.now();
    const summary = await done;
    assert.ok(Date.now() - started < 14_000, `ended ${Date.now() - started} ms after Redis died`);
    assert.deepEqual(summary.batches, { ok: 0, empty: 0, missing: 0, failed: 2, pending: 0 });
    for (const f of summary.failures) assert.match(f.reason, /^REDIS_UNAVAILABLE: not finished: Redis did not answer for \d+ s/, f.reason);
    // the store, which is fine, records them failed for that cause
    assert.deepEqual(
      (await store.batches.get([start, addMinutes(start, 1)])).map((e) => [e.status, e.error?.split(':')[0]]),
      [
        ['failed', 'REDIS_UNAVAILABLE'],
        ['failed', 'REDIS_UNAVAILABLE'],
      ],
    );
  } finally {
    queues.connection.disconnect();
    await store.close();
    await redis.stop().catch(() => undefined);
  }
});
