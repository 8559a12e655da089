import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { addMinutes, type MinuteId } from '../../src/minute/index.js';
import { createQueues } from '../../src/queue/index.js';
import { closeQueues, JobSettles, runBackfill, superviseWorkers } from '../../src/runner/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { tempDir, testConfig } from '../support/env.js';

/** Which of `p` and a long wait settles first. */
async function first(p: Promise<void>, ms = 5_000): Promise<'paused' | 'still waiting'> {
  const timer = new AbortController();
  const out = await Promise.race([
    p.then(() => 'paused' as const),
    sleep(ms, 'still waiting' as const, { signal: timer.signal }).catch(() => 'still waiting' as const),
  ]);
  timer.abort();
  return out;
}

test('a pause ends when a job ends meanwhile, at once when one ended since the last pause, and on abort', async () => {
  const s = new JobSettles();
  // nothing ended: the pause lasts its time
  const t0 = Date.now();
  await s.pause(50);
  assert.ok(Date.now() - t0 >= 45, 'a pause with no job ending lasts its time');

  // a job ending during the pause ends it, long before its hour
  const during = s.pause(3_600_000);
  setTimeout(() => s.notify(), 20);
  assert.equal(await first(during), 'paused');

  // a job that ended between two pauses (during a poll) is not missed
  s.notify();
  assert.equal(await first(s.pause(3_600_000)), 'paused');
  // ...and counts once: the next pause waits again
  const next = s.pause(3_600_000);
  assert.equal(await first(next, 100), 'still waiting');
  s.notify();
  assert.equal(await first(next), 'paused');

  // a stop request ends it too
  const abort = new AbortController();
  const aborted = s.pause(3_600_000, abort.signal);
  abort.abort();
  assert.equal(await first(aborted), 'paused');
});

test("a backfill's wait ends when the process's own last job ends, not at its next poll", async () => {
  const dir = tempDir();
  const start: MinuteId = '202611010000';
  const manifest = await writeFeed({ out: join(dir, 'feed'), seed: 5, start, minutes: 2, perMinute: 20, malformedRate: 0, bigRate: 0 });
  const config = await testConfig(dir);
  const log = createLogger('silent');
  const store = openStore(config.store, config);
  const queues = createQueues(config.redisUrl as string, config, log);
  try {
    const minutes = [start, addMinutes(start, 1)];
    const began = Date.now();
    // a poll every hour: only the workers' own job endings can end this wait within the test's time
    const out = await superviseWorkers({
      redisUrl: config.redisUrl as string,
      config,
      store,
      queues,
      log,
      kind: 'backfill',
      task: (signal, parts) =>
        runBackfill({ queues, store, sourceSpec: `dir:${join(dir, 'feed')}`, minutes, signal, log, pollMs: 3_600_000, pause: parts.pause }),
    });
    assert.ok(Date.now() - began < 60_000, 'the backfill ended without sitting out an hour-long poll');
    assert.equal(out.fatal, undefined);
    assert.deepEqual(out.result?.batches, { ok: 2, empty: 0, missing: 0, failed: 0, pending: 0 });
    assert.equal(out.result?.records.indexed, manifest.records);
  } finally {
    await closeQueues(queues, log);
    await store.close();
  }
}, 60_000);
