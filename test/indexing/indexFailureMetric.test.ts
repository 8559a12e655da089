import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'vitest';
import { SandtrailError } from '../../src/errors/index.js';
import { IndexWorker } from '../../src/indexing/index.js';
import { createLogger } from '../../src/log/index.js';
import { processMetrics } from '../../src/metrics/index.js';
import { createQueues, RedisChunkTransport } from '../../src/queue/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';

const log = createLogger('silent');

async function failedBatches(): Promise<number> {
  const metric = processMetrics().registry.getSingleMetric('sandtrail_batches_total');
  const values = metric ? (await metric.get()).values : [];
  return values.filter((v) => v.labels.outcome === 'failed').reduce((n, v) => n + v.value, 0);
}

test('a chunk a fleet index worker cannot store counts its batch failed in sandtrail_batches_total (the alert on failed batches fires)', async () => {
  const dir = tempDir();
  const config = await testConfig(dir);
  const real = openStore(config.store, config);
  cleanup(() => real.close());
  // a store that refuses every write for good, as a read-only file does
  const readOnly = new SandtrailError('STORE_READONLY', 'the SQLite store is read-only');
  const store: Store = {
    ...real,
    sink: Object.assign(Object.create(real.sink) as Store['sink'], { upsert: () => Promise.reject(readOnly) }),
  };
  const queues = createQueues(config.redisUrl as string, config);
  cleanup(() => queues.close());
  const before = await failedBatches();
  const worker = new IndexWorker({ redisUrl: config.redisUrl as string, config, store, queues, log });
  worker.start();
  cleanup(() => worker.stop(true));
  const batch = '202611060000';
  await new RedisChunkTransport(queues, config, log).emit(batch, 0, sinkDocs([makeDoc('a'.repeat(64), 'Zenbox', 1000, {})]));
  for (let i = 0; i < 400 && (await real.batches.storedChunks(batch, 1)).length === 0; i++) {
    if ((await failedBatches()) > before) break;
    await sleep(25);
  }
  assert.equal((await failedBatches()) - before, 1);
});
