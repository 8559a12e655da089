import assert from 'node:assert/strict';
import { test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createQueues, QUEUE_STREAMS } from '../../src/queue/index.js';
import { testRedisUrl, uniquePrefix } from '../support/env.js';

test('every queue caps its event stream (sandtrail reads no queue events): a month of jobs cannot grow it', async () => {
  const redisUrl = await testRedisUrl();
  const config = loadConfig({ env: {}, flags: { redisUrl, queuePrefix: uniquePrefix() } });
  const queues = createQueues(redisUrl, config);
  try {
    await queues.feed.waitUntilReady();
    await queues.index.waitUntilReady();
    for (const q of [queues.feed, queues.index]) {
      // BullMQ keeps the cap in the queue's meta, where every worker's XADD reads it
      assert.equal(
        await queues.connection.hget(`${config.queuePrefix}:${q.name}:meta`, 'opts.maxLenEvents'),
        String(QUEUE_STREAMS.events.maxLen),
      );
    }
    for (let i = 0; i < 1500; i++) await queues.feed.add('x', { batch: `b${i}` } as never, { jobId: `j${i}`, removeOnComplete: true });
    const len = await queues.connection.xlen(`${config.queuePrefix}:feed:events`);
    // trimmed as entries are added, by whole stream nodes (100 entries): never far past the cap
    assert.ok(len <= QUEUE_STREAMS.events.maxLen + 200, `the events stream holds ${len} entries`);
  } finally {
    await queues.close();
  }
});
