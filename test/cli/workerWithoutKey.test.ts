import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { createQueues, feedJobId } from '../../src/queue/index.js';
import { runCli } from '../support/cli.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';

const NO_KEY = { GTI_APIKEY: '', SANDTRAIL_GTI_API_KEY: '' };

test('a fleet worker without GTI_APIKEY: lookup and artefact workers refuse to start; a feed worker stops at an api minute and keeps it', async () => {
  const dir = tempDir();
  const config = await testConfig(dir);
  const env = {
    ...NO_KEY,
    REDIS_URL: config.redisUrl!,
    SANDTRAIL_QUEUE_PREFIX: config.queuePrefix,
    SANDTRAIL_STORE: `sqlite:${join(dir, 'w.db')}`,
  };
  for (const kind of ['lookup', 'artefacts']) {
    const r = await runCli(['worker', kind], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`worker ${kind} calls the GTI API for every job: set GTI_APIKEY`));
  }

  const queues = createQueues(config.redisUrl!, config);
  cleanup(() => queues.close());
  const minute = '202611270500';
  await queues.feed.add('batch', { batch: minute, source: 'api' }, { jobId: feedJobId(minute) });
  const r = await runCli(['worker', 'feed'], { env });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /this feed worker has no GTI API key.*set GTI_APIKEY in its environment/);
  // the minute is kept for a worker that has the key, not failed
  const state = await queues.feed.getJobState(feedJobId(minute));
  assert.ok(['delayed', 'waiting'].includes(state), state);
  assert.equal((await queues.feed.getJob(feedJobId(minute)))?.attemptsMade ?? 0, 0);
});
