import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { createQueues } from '../../src/queue/index.js';
import { addMinutes } from '../../src/minute/index.js';
import { runBackfill } from '../../src/runner/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { tempDir, testConfig } from '../support/env.js';

test('a backfill whose store cannot be read back still returns a summary: every minute unfinished, with why', async () => {
  const dir = tempDir();
  const config = await testConfig(dir);
  const real = openStore(config.store, config);
  // the store goes away (a cluster unreachable): its batch log answers nothing
  const gone = Object.assign(new Error('batch log get failed: ConnectionError: connect ECONNREFUSED 127.0.0.1:9'), {
    code: 'SINK_UNAVAILABLE',
  });
  const store: Store = { ...real, batches: { ...real.batches, get: () => Promise.reject(gone) } } as Store;
  const queues = createQueues(config.redisUrl as string, config);
  const start = '202611090000';
  const stop = new AbortController();
  try {
    // no worker takes the jobs; the operator stops the wait
    const run = runBackfill({
      queues,
      store,
      sourceSpec: `dir:${join(dir, 'feed')}`,
      minutes: [start, addMinutes(start, 1)],
      pollMs: 20,
      signal: stop.signal,
    });
    setTimeout(() => stop.abort(), 200);
    const summary = await run;
    assert.equal(summary.interrupted, true);
    assert.deepEqual(summary.batches, { ok: 0, empty: 0, missing: 0, failed: 0, pending: 2 });
    assert.deepEqual(summary.records, { indexed: 0, rejected: 0 });
    // one failure per pending minute: an empty list would prove nothing below
    assert.equal(summary.failures.length, 2, JSON.stringify(summary.failures));
    for (const f of summary.failures) {
      assert.equal(f.status, 'pending');
      assert.match(f.reason, /^SINK_UNAVAILABLE: the store could not be read back for this summary: batch log get failed: ConnectionError/);
    }
  } finally {
    await queues.close();
    await real.close();
  }
});
