import assert from 'node:assert/strict';
import { test } from 'vitest';
import { formatLookupSummary, runLookupCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { createLookupQueue, lookupBatch, lookupJobId } from '../../src/lookup/index.js';
import { openStore } from '../../src/store/index.js';
import { createQueues } from '../../src/queue/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';

const KEY = 'rerun-key-8e42';

/** What a call writes to stdout (the dry run's estimate). */
async function stdoutOf(fn: () => Promise<unknown>): Promise<string> {
  const out: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
  try {
    await fn();
  } finally {
    process.stdout.write = write;
  }
  return out.join('');
}

test('a re-run is estimated, weighed against the daily allowance and charged only for the hashes left to fetch', async () => {
  const done = [1, 2, 3, 4, 5, 6].map((n) => makeFakeFile(`rerun-${n}`, { behaviours: 1 }));
  const fresh = [7, 8].map((n) => makeFakeFile(`rerun-${n}`, { behaviours: 1 }));
  const allowance = { allowed: 100, used: 0 };
  const fake = await startFakeGti({
    apiKey: KEY,
    files: [...done, ...fresh],
    quotas: { analyst: { api_requests_daily: { user: allowance } } },
  });
  cleanup(() => fake.close());
  const config = await testConfig(tempDir(), { gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', backoffMs: 20 } });
  const account = accountApi(fake, config);
  const ctx = { config, log: createLogger('silent') };
  const hashes = done.map((f) => f.sha256);

  const first = await runLookupCommand(hashes, {}, ctx);
  assert.deepEqual(first?.counts, { ok: 6 });
  assert.equal(first?.api_units, 6);
  account.summary(first?.api_units);

  // the day's allowance is used up: a re-run of finished hashes costs nothing, so nothing stops it
  allowance.used = 100;
  assert.match(await stdoutOf(() => runLookupCommand(hashes, { dryRun: true }, ctx)), /estimated API units: 0\b/);
  const before = fake.requests.length;
  const again = await runLookupCommand(hashes, {}, ctx);
  assert.deepEqual(again?.counts, { skipped: 6 });
  assert.equal(again?.api_units, 0);
  assert.match(
    formatLookupSummary(again as NonNullable<typeof again>, ctx.config.store),
    /skipped: finished by an earlier run; --refresh fetches them again\n?$/,
  );
  assert.equal(fake.requests.length, before, 'not even the allowance was read: there was nothing to pay');
  account.summary(again?.api_units);

  // two new hashes among the six: 2 units estimated, weighed against the one left
  allowance.used = 99;
  const mixed = [...hashes, ...fresh.map((f) => f.sha256)];
  assert.match(await stdoutOf(() => runLookupCommand(mixed, { dryRun: true }, ctx)), /estimated API units: at least 2\b/);
  await assert.rejects(runLookupCommand(mixed, {}, ctx), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'BUDGET_EXCEEDED');
    assert.match(err.message, /estimate \(2 API units\) exceeds the 1 units left today/);
    return true;
  });
  allowance.used = 98;
  const last = await runLookupCommand(mixed, {}, ctx);
  assert.deepEqual(last?.counts, { skipped: 6, ok: 2 });
  assert.equal(last?.api_units, 2);
  account.summary(last?.api_units);
  // --refresh fetches every hash again: all of them are estimated
  assert.match(await stdoutOf(() => runLookupCommand(mixed, { dryRun: true, refresh: true }, ctx)), /estimated API units: at least 8\b/);
});

test("a re-run reports its own outcome, not the one an earlier run left; a job an earlier run left waiting runs under the new run's budget", async () => {
  const file = makeFakeFile('rerun-stale', { behaviours: 3 });
  const other = makeFakeFile('rerun-left', { behaviours: 1 });
  const fake = await startFakeGti({ apiKey: KEY, files: [file, other] });
  cleanup(() => fake.close());
  const config = await testConfig(tempDir(), { gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', backoffMs: 20 } });
  const account = accountApi(fake, config);
  const ctx = { config, log: createLogger('silent') };

  const stopped = await runLookupCommand([file.sha256], { maxApiUnits: '0' }, ctx);
  assert.deepEqual(stopped?.counts, { budget: 1 });
  assert.equal(fake.countFor('/api/v3/files/'), 0);
  const again = await runLookupCommand([file.sha256], {}, ctx);
  assert.deepEqual(again?.counts, { ok: 1 }, JSON.stringify(again?.hashes));
  assert.equal(again?.documents.indexed, 3);
  assert.equal(again?.api_units, 1);
  account.summary(again?.api_units);

  // an earlier run's job left delayed for its retry, with that run's data (no budget of its own)
  const queues = createQueues(config.redisUrl as string, config);
  cleanup(() => queues.close());
  const queue = createLookupQueue(queues, config);
  cleanup(() => queue.close());
  await queue.add('lookup', { hash: other.sha256, run: 'an-earlier-run' }, { jobId: lookupJobId(other.sha256), delay: 60_000 });
  const before = fake.countFor('/api/v3/files/');
  const started = Date.now();
  const budgeted = await runLookupCommand([other.sha256], { maxApiUnits: '0' }, ctx);
  assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms: the delayed job was waited for`);
  assert.deepEqual(budgeted?.counts, { budget: 1 });
  assert.equal(fake.countFor('/api/v3/files/'), before, 'the budget of 0 held');
});

test('a budget stop in the middle of a file keeps the reports it paid for, stored; the outcome stays failed and a re-run fetches the file whole', async () => {
  const file = makeFakeFile('rerun-partial', { behaviours: 3 });
  const fake = await startFakeGti({ apiKey: KEY, files: [file] });
  cleanup(() => fake.close());
  const config = await testConfig(tempDir(), {
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', backoffMs: 20 },
    lookup: { pageSize: 1 },
  });
  const account = accountApi(fake, config);
  const ctx = { config, log: createLogger('silent') };
  const stopped = await runLookupCommand([file.sha256], { maxApiUnits: '2' }, ctx);
  assert.deepEqual(stopped?.counts, { budget: 1 });
  assert.equal(stopped?.api_units, 2);
  assert.equal(stopped?.documents.indexed, 2);
  account.summary(stopped?.api_units);
  const store = openStore(config.store, config);
  try {
    assert.equal((await store.sink.query('sha256', file.sha256)).length, 2, 'the two reports paid for are stored');
    const [entry] = await store.batches.get([lookupBatch(file.sha256)]);
    assert.equal(entry?.status, 'failed', 'never settled ok by its stored chunks');
  } finally {
    await store.close();
  }
  const again = await runLookupCommand([file.sha256], {}, ctx);
  assert.deepEqual(again?.counts, { ok: 1 });
  assert.equal(again?.documents.indexed, 3);
  account.summary(again?.api_units);
});
