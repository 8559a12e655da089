import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { writeFeed } from '../../src/synth/index.js';
import { runCli, startCli } from '../support/cli.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';

const KEY = 'fleet-store-key-7af1';

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
  for (const [kind, store] of workers(dir)) await startedWorker(kind, { ...env, SANDTRAIL_STORE: `sqlite:${store}` });
  const r = await runCli(['backfill', '--source', `dir:${feed}`, '--no-workers', '--json', '--store', `sqlite:${run}`], { env });
  assert.equal(r.code, 1, r.stderr);
  const summary = JSON.parse(r.stdout) as { batches: { failed: number }; failures: { reason: string }[] };
  assert.equal(summary.batches.failed, 2, r.stdout);
  for (const f of summary.failures) assert.ok(f.reason.includes(refusal(run, other)), f.reason);
  for (const table of ['batches', 'batch_chunks', 'behaviours']) assert.equal(rows(other, table), 0, `${table} of the worker's store`);
}

/** `sandtrail worker KIND`, once it says it started. */
async function startedWorker(kind: string, env: Record<string, string>): Promise<void> {
  const w = startCli(['worker', kind], env);
  cleanup(() => void w.child.kill('SIGKILL'));
  let log = '';
  w.child.stderr?.on('data', (s: Buffer | string) => (log += String(s)));
  for (let t = 0; t < 300 && !log.includes('worker started'); t++) await sleep(100);
  assert.match(log, /worker started/);
}

function rows(file: string, table: string): number {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
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

test("a fleet lookup worker writing another SQLite store refuses a lookup's hashes before asking the API; the run records the refusal in its own store", async () => {
  const dir = tempDir();
  const file = makeFakeFile('fleet-store-lookup', { behaviours: 3 });
  const fake = await startFakeGti({ apiKey: KEY, files: [file] });
  cleanup(() => fake.close());
  const env = {
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_LOG_LEVEL: 'info',
    GTI_APIKEY: KEY,
    GTI_BASE_URL: fake.baseUrl,
  };
  const account = accountApi(fake, { redisUrl: env.REDIS_URL, queuePrefix: env.SANDTRAIL_QUEUE_PREFIX });
  const run = join(dir, 'run.db');
  const other = join(dir, 'other.db');
  await startedWorker('lookup', { ...env, SANDTRAIL_STORE: `sqlite:${other}` });
  const r = await runCli(['lookup', file.sha256, '--no-workers', '--json', '--store', `sqlite:${run}`], { env });
  assert.equal(r.code, 1, r.stderr);
  const summary = JSON.parse(r.stdout) as { hashes: { outcome: string; error?: string }[]; api_units: number };
  assert.equal(summary.hashes[0]?.outcome, 'failed', r.stdout);
  assert.ok(
    summary.hashes[0]?.error?.includes(
      `CONFIG_INVALID: this hash was enqueued for the store sqlite:${run}, and this lookup worker writes sqlite:${other}`,
    ),
    r.stdout,
  );
  assert.equal(fake.countFor('/api/v3/files/', 200), 0, 'nothing asked of the API');
  account.summary(summary.api_units);
  assert.equal(rows(other, 'batches'), 0, "the worker's store");
  assert.equal(rows(run, 'batches'), 1, "the run's store keeps the outcome");
}, 90_000);
