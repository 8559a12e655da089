import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import { test } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import {
  classifyHash,
  createLookupQueue,
  lookupJobId,
  LookupWorker,
  RunBudget,
  runLookup,
  type LookupJobData,
  type LookupJobResult,
} from '../../src/lookup/index.js';
import { createQueues } from '../../src/queue/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';

const KEY = 'race-key-61f0';

/** Waits until every job is in `state`. */
async function until(queue: Queue<LookupJobData, LookupJobResult>, ids: string[], state: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const states = await Promise.all(ids.map(async (id) => (await queue.getJob(id))?.getState()));
    if (states.every((s) => s === state)) return;
    await sleep(25);
  }
  assert.fail(`the jobs ${ids.join(', ')} never reached ${state}`);
}

test('a hash whose worker records its outcome and completes between the wait loop snapshot and the job-state read is not fetched (nor paid for) again', async () => {
  // no reports, and unknown: their outcomes need no index stage, so the lookup worker alone finishes them
  const empty = makeFakeFile('race-empty', { behaviours: 0 });
  const unknown = randomBytes(32).toString('hex');
  const fake = await startFakeGti({ apiKey: KEY, files: [empty] });
  cleanup(() => fake.close());
  const dir = tempDir();
  const config = await testConfig(dir, { gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'racer', backoffMs: 20 } });
  const account = accountApi(fake, config);
  const log = createLogger('silent');
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const queues = createQueues(config.redisUrl as string, config);
  cleanup(() => queues.close());
  const queue = createLookupQueue(queues, config);
  cleanup(() => queue.close());
  const hashes = [empty.sha256, unknown].map(classifyHash);
  const ids = [empty.sha256, unknown].map(lookupJobId);
  const worker = (): LookupWorker => new LookupWorker({ redisUrl: config.redisUrl as string, config, store, queues, log });
  const first = worker();
  cleanup(() => first.stop(true));

  // The pause point: the wait loop's first batch-log snapshot is taken (no outcome yet), then,
  // before the loop reads the jobs' states, the worker runs both jobs to the end (outcome
  // recorded, job completed) and stops. The loop then sees a stale "no outcome" beside "completed".
  let reads = 0;
  const get: Store['batches']['get'] = async (batches) => {
    const snapshot = await store.batches.get(batches);
    reads += 1;
    if (reads === 2) {
      assert.deepEqual(snapshot, [], 'the snapshot is taken before any outcome');
      first.start();
      await until(queue, ids, 'completed');
      await first.stop();
    }
    return snapshot;
  };
  // the batch log as it is, but for `get`
  const batches = new Proxy(store.batches, {
    get: (target, prop) => {
      if (prop === 'get') return get;
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  const paused: Store = { ...store, batches };
  const warnings: string[] = [];
  const spy = Object.assign(Object.create(log) as typeof log, {
    warn: (...args: unknown[]) => void warnings.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')),
  });
  const run = 'race-run';
  const budget = new RunBudget(queues.connection, RunBudget.keyOf(config.queuePrefix, run), Number.POSITIVE_INFINITY);
  const summary = await runLookup({
    queue,
    indexQueue: queues.index,
    store: paused,
    hashes,
    run,
    prefix: config.queuePrefix,
    budget,
    log: spy,
    pollMs: 20,
  });
  assert.ok(reads >= 2, 'the pause point was reached');
  assert.deepEqual(summary.counts, { no_behaviours: 1, not_found: 1 });
  assert.deepEqual(warnings, [], 'nothing was enqueued again');
  assert.deepEqual(await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'), {
    waiting: 0,
    active: 0,
    delayed: 0,
    prioritized: 0,
  });

  // whatever a worker would still find to do is done now: a hash enqueued again would be fetched again
  const second = worker();
  cleanup(() => second.stop(true));
  second.start();
  await sleep(300);
  await until(queue, ids, 'completed');
  await second.stop();
  assert.equal(fake.countFor(`/api/v3/files/${empty.sha256}/behaviours`), 1, 'one page for the hash, paid once');
  assert.equal(fake.countFor(`/api/v3/files/${unknown}/behaviours`), 1, 'one 404 for the unknown hash, paid once');
  assert.equal(summary.api_units, 2);
  account.summary(summary.api_units);
});
