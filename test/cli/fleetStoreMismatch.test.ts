import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { writeFeed } from '../../src/synth/index.js';
import { builtCli, runCli, startCli } from '../support/cli.js';
import { cleanup, tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

/**
 * Fleet workers (`worker KIND` writing the store given beside it) on a Redis of the test's own,
 * then `backfill --no-workers` of a two-minute feed into run.db: the backfill must fail both
 * minutes with `refusal` as their reason, and other.db must hold no batch row, chunk mark or
 * behaviour.
 */
async function refusedFleet(workers: (dir: string) => [string, string][], refusal: (run: string, other: string) => string): Promise<void> {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  await writeFeed({ out: feed, seed: 9, start: '202611010000', minutes: 2, perMinute: 5, malformedRate: 0 });
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_LOG_LEVEL: 'info' };
  const run = join(dir, 'run.db');
  const other = join(dir, 'other.db');
  for (const [kind, store] of workers(dir)) {
    const w = startCli(['worker', kind], { ...env, SANDTRAIL_STORE: `sqlite:${store}` }, builtCli());
    cleanup(() => void w.child.kill('SIGKILL'));
    let log = '';
    w.child.stderr?.on('data', (s: Buffer | string) => (log += String(s)));
    for (let t = 0; t < 300 && !log.includes('worker started'); t++) await sleep(100);
    assert.match(log, /worker started/);
  }
  const r = await runCli(['backfill', '--source', `dir:${feed}`, '--no-workers', '--json', '--store', `sqlite:${run}`], { env });
  assert.equal(r.code, 1, r.stderr);
  const summary = JSON.parse(r.stdout) as { batches: { failed: number }; failures: { reason: string }[] };
  assert.equal(summary.batches.failed, 2, r.stdout);
  for (const f of summary.failures) assert.ok(f.reason.includes(refusal(run, other)), f.reason);
  const db = new BetterSqlite3(other, { readonly: true });
  try {
    for (const table of ['batches', 'batch_chunks', 'behaviours'])
      assert.equal((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n, 0, `${table} of the worker's store`);
  } finally {
    db.close();
  }
}

test(
  "a fleet feed worker writing another SQLite store refuses a backfill's minutes, naming both stores, and writes nothing into its own",
  () =>
    refusedFleet(
      (dir) => [['feed', join(dir, 'other.db')]],
      (run, other) => `CONFIG_INVALID: this minute was enqueued for the store sqlite:${run}, and this feed worker writes sqlite:${other}`,
    ),
  90_000,
);

test(
  "a fleet index worker writing another SQLite store refuses the chunks read for the run's store, and writes nothing into its own",
  () =>
    refusedFleet(
      (dir) => [
        ['feed', join(dir, 'run.db')],
        ['index', join(dir, 'other.db')],
      ],
      (run, other) => `CONFIG_INVALID: this chunk was read for the store sqlite:${run}, and this index worker writes sqlite:${other}`,
    ),
  90_000,
);
