import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { addMinutes, minuteRange } from '../../src/feed/index.js';
import { createQueues, runBackfill } from '../../src/queue/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { baseEnv } from '../support/cli.js';
import type { ConfigInput } from '../../src/config/index.js';
import { tempDir, testConfig } from '../support/env.js';
import { FakeElasticsearch } from '../support/fakeElasticsearch.js';
import { assertNewestWins, expectedDead, fakeEsContents, storeContents, type Contents } from '../support/storeContents.js';

function startWorker(kind: 'feed' | 'index', env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', join('workers', `${kind}-worker.ts`)], {
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

const exitOf = (c: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> =>
  c.exitCode !== null || c.signalCode !== null
    ? Promise.resolve({ code: c.exitCode, signal: c.signalCode })
    : new Promise((r) => c.once('exit', (code, signal) => r({ code, signal })));

const fakeEs = new FakeElasticsearch();
after(() => fakeEs.close());

/** Each backend: the config overrides that select it, and how to read back what it holds. */
const backends: [string, (dir: string) => Promise<{ over: ConfigInput; contents: () => Contents }>][] = [
  ['sqlite', async (dir) => ({ over: {}, contents: () => storeContents(join(dir, 'store.db')) })],
  [
    'elasticsearch',
    async () => ({
      over: { sink: `es:${await fakeEs.listen()}`, elasticsearch: { indexPrefix: 'crash' } },
      contents: () => fakeEsContents(fakeEs, 'crash'),
    }),
  ],
];

for (const [name, backend] of backends)
  test(`SIGKILL of both worker processes mid-backfill loses and duplicates nothing once they restart (${name})`, async () => {
    const dir = tempDir();
    const { over, contents } = await backend(dir);
    const start = '202611020000';
    const minutes = 16;
    const manifest = await writeFeed({
      out: join(dir, 'feed'),
      seed: 23,
      start,
      minutes,
      perMinute: 60,
      malformedRate: 0.03,
      bigRate: 0.05,
    });
    const config = await testConfig(dir, { ...over, index: { chunkMaxDocs: 10, highWaterChunks: 3 } });
    const env = {
      SANDTRAIL_REDIS_URL: config.redisUrl,
      SANDTRAIL_QUEUE_PREFIX: config.queuePrefix,
      SANDTRAIL_SINK: config.sink,
      SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: config.elasticsearch.indexPrefix,
      SANDTRAIL_LOG_LEVEL: 'warn',
      SANDTRAIL_WORKER_LOCK_DURATION_MS: '3000',
      SANDTRAIL_WORKER_STALLED_INTERVAL_MS: '1000',
      SANDTRAIL_INDEX_CHUNK_MAX_DOCS: '10',
      SANDTRAIL_INDEX_HIGH_WATER_CHUNKS: '3',
    };
    const store = openStore(config.sink, config);
    const queues = createQueues(config.redisUrl!, config);
    let feed = startWorker('feed', env);
    let index = startWorker('index', env);
    try {
      const done = runBackfill({
        queues,
        store,
        sourceSpec: `dir:${join(dir, 'feed')}`,
        minutes: [...minuteRange(start, addMinutes(start, minutes - 1))],
        pollMs: 100,
      });
      // wait until indexing is under way, then kill both workers in the middle of their jobs
      for (let i = 0; i < 600 && (await store.sink.count()) < manifest.expectedIds.length / 4; i++) await sleep(50);
      const midway = await store.sink.count();
      assert.ok(midway > 0 && midway < manifest.expectedIds.length, `killed mid-run (${midway} of ${manifest.expectedIds.length} stored)`);
      feed.kill('SIGKILL');
      index.kill('SIGKILL');
      assert.equal((await exitOf(feed)).signal, 'SIGKILL');
      assert.equal((await exitOf(index)).signal, 'SIGKILL');
      feed = startWorker('feed', env);
      index = startWorker('index', env);

      const summary = await done;
      assert.deepEqual(summary.batches, { ok: minutes, empty: 0, missing: 0, failed: 0, pending: 0 });
      assert.equal(summary.records.rejected, manifest.malformedLines);
      const stored = contents();
      assert.deepEqual(stored.ids, manifest.expectedIds, 'exactly the expected ids, none lost');
      assert.deepEqual(stored.dead, expectedDead(manifest), 'exactly the malformed lines in the dead-letter store');
      assertNewestWins(manifest, stored.lmd);

      // first SIGTERM drains and the workers exit cleanly
      feed.kill('SIGTERM');
      index.kill('SIGTERM');
      assert.deepEqual(await exitOf(feed), { code: 0, signal: null });
      assert.deepEqual(await exitOf(index), { code: 0, signal: null });
    } finally {
      for (const c of [feed, index]) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await queues.close();
      await store.close();
    }
  });
