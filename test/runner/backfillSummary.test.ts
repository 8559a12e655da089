import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { recordFailures, summarize } from '../../src/runner/index.js';
import { openStore, type BatchLogEntry } from '../../src/store/index.js';
import { tempDir } from '../support/env.js';

const row = (batch: string, startedAt: number): BatchLogEntry => ({
  batch,
  source: 'dir:/feed',
  status: 'ok',
  lines: 7,
  accepted: 7,
  rejected: 0,
  chunks: 1,
  bytesDecoded: 700,
  error: null,
  startedAt,
  finishedAt: startedAt + 10,
});

test("a run that lost Redis before it saw a minute finish reports it as its row says when this run's workers wrote that row; an earlier run's row says nothing", async () => {
  const store = openStore(`sqlite:${join(tempDir(), 's.db')}`);
  try {
    const startedAt = Date.now() - 60_000;
    const [done, earlier, open] = ['202611010000', '202611010001', '202611010002'];
    // a fleet worker stored `done` during this run; `earlier` is ok from a run before it; `open` never started
    for (const [b, at] of [
      [done, startedAt + 5_000],
      [earlier, startedAt - 86_400_000],
    ] as const) {
      await store.batches.record(row(b, at));
      await store.batches.chunkStored(b, 0, 7);
    }
    const redisLost = 'Redis did not answer for 10 s (worker.redisWaitMs): the run stopped waiting for it';
    const summary = await summarize(store, [done, earlier, open], {
      redisLost,
      unfinished: new Set([done, earlier, open]),
      startedAt,
    });
    assert.deepEqual(summary.batches, { ok: 1, empty: 0, missing: 0, failed: 2, pending: 0 });
    assert.deepEqual(
      summary.failures.map((f) => f.batch),
      [earlier, open],
    );
    assert.ok(summary.failures.every((f) => f.reason === `REDIS_UNAVAILABLE: not finished: ${redisLost}`));
    // what the store holds counts: the finished minute whole, the other by its stored chunks
    assert.equal(summary.records.indexed, 14);
    // the batch log keeps the finished minute ok
    await recordFailures(store, 'dir:/feed', summary, undefined);
    const rows = new Map((await store.batches.get([done, earlier, open])).map((e) => [e.batch, e.status]));
    assert.deepEqual([rows.get(done), rows.get(earlier), rows.get(open)], ['ok', 'failed', 'failed']);
  } finally {
    await store.close();
  }
});
