import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'vitest';
import { FeedWorker } from '../../src/feed/index.js';
import { createLogger } from '../../src/log/index.js';
import { createQueues } from '../../src/queue/index.js';
import { openStore } from '../../src/store/index.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';

test('a feed job whose data Redis evicted fails for good with QUEUE_STATE_LOST, not a TypeError, and records nothing', async () => {
  const config = await testConfig(tempDir());
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const queues = createQueues(config.redisUrl as string, config);
  cleanup(() => queues.close());
  const worker = new FeedWorker({ redisUrl: config.redisUrl as string, config, store, queues, log: createLogger('silent') });
  worker.start();
  cleanup(() => worker.stop(true));
  // what is left of a job once an eviction policy dropped the fields of its hash
  const job = await queues.feed.add('batch', {} as never, { jobId: 'feed-evicted', attempts: 3 });
  let state = await job.getState();
  for (let i = 0; i < 100 && state !== 'failed'; i++) {
    await sleep(50);
    state = await job.getState();
  }
  assert.equal(state, 'failed');
  const failed = await queues.feed.getJob('feed-evicted');
  assert.match(failed?.failedReason ?? '', /^QUEUE_STATE_LOST: feed job feed-evicted has no data left in Redis/);
  assert.equal(failed?.attemptsMade, 1, 'not tried again');
  assert.deepEqual(await store.batches.recent(10), []);
}, 30_000);
