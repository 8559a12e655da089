import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { writeFeed } from '../../src/synth/index.js';
import { builtCli, runCli, startCli } from '../support/cli.js';
import { cleanup, tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

test("a fleet feed worker writing another SQLite store refuses a backfill's minutes, naming both stores, and writes nothing into its own", async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  await writeFeed({ out: feed, seed: 8, start: '202611010000', minutes: 2, perMinute: 5, malformedRate: 0 });
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_LOG_LEVEL: 'info' };
  const other = join(dir, 'other.db');
  const worker = startCli(['worker', 'feed'], { ...env, SANDTRAIL_STORE: `sqlite:${other}` }, builtCli());
  cleanup(() => void worker.child.kill('SIGKILL'));
  let log = '';
  worker.child.stderr?.on('data', (s: Buffer | string) => (log += String(s)));
  for (let i = 0; i < 300 && !log.includes('worker started'); i++) await sleep(100);
  assert.match(log, /worker started/);

  const run = join(dir, 'run.db');
  const r = await runCli(['backfill', '--source', `dir:${feed}`, '--no-workers', '--json', '--store', `sqlite:${run}`], { env });
  assert.equal(r.code, 1, r.stderr);
  const summary = JSON.parse(r.stdout) as { batches: { failed: number }; failures: { reason: string }[] };
  assert.equal(summary.batches.failed, 2);
  for (const f of summary.failures)
    assert.match(
      f.reason,
      new RegExp(`CONFIG_INVALID: this minute was enqueued for the store sqlite:${run}, and this feed worker writes sqlite:${other}`),
    );
  const db = new BetterSqlite3(other, { readonly: true });
  try {
    assert.equal((db.prepare('SELECT count(*) AS n FROM batches').get() as { n: number }).n, 0, 'no batch row in the worker store');
    assert.equal((db.prepare('SELECT count(*) AS n FROM behaviours').get() as { n: number }).n, 0);
  } finally {
    db.close();
  }
}, 90_000);

test("a fleet index worker writing another SQLite store refuses the chunks read for the run's store, and writes nothing into its own", async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  await writeFeed({ out: feed, seed: 9, start: '202611010000', minutes: 2, perMinute: 5, malformedRate: 0 });
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_LOG_LEVEL: 'info' };
  const run = join(dir, 'run.db');
  const other = join(dir, 'other.db');
  const logs: string[] = [];
  for (const [kind, store] of [
    ['feed', run],
    ['index', other],
  ] as const) {
    const w = startCli(['worker', kind], { ...env, SANDTRAIL_STORE: `sqlite:${store}` }, builtCli());
    cleanup(() => void w.child.kill('SIGKILL'));
    const i = logs.push('') - 1;
    w.child.stderr?.on('data', (s: Buffer | string) => (logs[i] += String(s)));
    for (let t = 0; t < 300 && !(logs[i] as string).includes('worker started'); t++) await sleep(100);
  }
  const r = await runCli(['backfill', '--source', `dir:${feed}`, '--no-workers', '--json', '--store', `sqlite:${run}`], { env });
  assert.equal(r.code, 1, r.stderr);
  const summary = JSON.parse(r.stdout) as { batches: { failed: number }; failures: { reason: string }[] };
  assert.equal(summary.batches.failed, 2, r.stdout);
  for (const f of summary.failures)
    assert.match(
      f.reason,
      new RegExp(`CONFIG_INVALID: this chunk was read for the store sqlite:${run}, and this index worker writes sqlite:${other}`),
    );
  const db = new BetterSqlite3(other, { readonly: true });
  try {
    assert.equal((db.prepare('SELECT count(*) AS n FROM batch_chunks').get() as { n: number }).n, 0, 'no chunk mark in the worker store');
    assert.equal((db.prepare('SELECT count(*) AS n FROM behaviours').get() as { n: number }).n, 0);
  } finally {
    db.close();
  }
}, 90_000);
