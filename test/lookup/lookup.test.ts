import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'vitest';
import { runLookupCommand } from '../../src/cli/index.js';
import type { ConfigInput } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { createLookupQueue, lookupBatch, lookupJobId, LookupWorker } from '../../src/lookup/index.js';
import { createQueues, createRedis } from '../../src/queue/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { openStore } from '../../src/store/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { makeFakeFile, startFakeGti, type FakeFile } from '../support/fakeGti.js';

const KEY = 'lookup-key-7d1e';
const BEHAVIOURS = '/api/v3/files/';

async function setup(files: FakeFile[], over: ConfigInput = {}, quotas?: Record<string, unknown>) {
  const dir = tempDir();
  const fake = await startFakeGti({ apiKey: KEY, files, quotas });
  cleanup(() => fake.close());
  const config = await testConfig(dir, {
    ...over,
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', group: 'soc', backoffMs: 20, maxRetries: 4, ...over.gti },
    lookup: { pageSize: 2, backoffMs: 50, ...over.lookup },
  });
  const ctx = { config, log: createLogger('silent') };
  const account = accountApi(fake, config);
  const redis = createRedis(config.redisUrl as string, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const ledger = new QuotaLedger(redis, config.queuePrefix);
  const calls = async (): Promise<Record<string, { calls: number; units: Record<string, number> }>> =>
    (await ledger.usage({ period: 'day', user: 'analyst' }))[0]?.operations as never;
  return { dir, fake, config, ctx, calls, account };
}

function idsOf(f: FakeFile): string[] {
  return f.behaviours.map((b) => String(b.id)).sort();
}

test('lookup pages through every report of each hash, indexes them like feed records, and reports each hash with the units spent', async () => {
  const a = makeFakeFile('lookup-a', { behaviours: 5 });
  const b = makeFakeFile('lookup-b', { behaviours: 3 });
  const empty = makeFakeFile('lookup-empty', { behaviours: 0 });
  const denied = makeFakeFile('lookup-denied', { behaviours: 2 });
  const unknown = randomBytes(32).toString('hex');
  const s = await setup([a, b, empty, denied]);
  s.fake.setFaults({ forbidden: [denied.sha256] });
  const hashes = [a.sha256.toUpperCase(), b.md5, empty.sha1, unknown, 'not-a-hash', denied.sha256];
  const summary = await runLookupCommand(hashes, {}, s.ctx);
  assert.ok(summary);
  assert.deepEqual(summary.counts, { ok: 2, no_behaviours: 1, not_found: 1, invalid: 1, forbidden: 1 });
  assert.deepEqual(
    summary.hashes.map((h) => [h.given, h.outcome, h.reports, h.indexed]),
    [
      [a.sha256.toUpperCase(), 'ok', 5, 5],
      [b.md5, 'ok', 3, 3],
      [empty.sha1, 'no_behaviours', 0, 0],
      [unknown, 'not_found', 0, 0],
      ['not-a-hash', 'invalid', 0, 0],
      [denied.sha256, 'forbidden', 0, 0],
    ],
  );
  assert.match(summary.hashes[5]?.error ?? '', /^GTI_FORBIDDEN/);
  assert.deepEqual(summary.documents, { indexed: 8, rejected: 0 });
  // pages: a 3 (2+2+1), b 2, empty 1, unknown 1, denied 1 — one unit each (rule 1)
  assert.equal(summary.api_units, 8);
  s.account.summary(summary.api_units);
  assert.equal(summary.interrupted, false);

  // every request the fake saw is one ledger call and one unit; the refused input never left
  const seen = s.fake.requests.filter((r) => r.path.startsWith(BEHAVIOURS));
  assert.equal(seen.length, 8);
  assert.ok(seen.every((r) => r.hadKey && /(^|&)limit=2(&|$)/.test(r.query)));
  assert.ok(!s.fake.requests.some((r) => r.path.includes('not-a-hash')));
  assert.equal(seen.filter((r) => r.path.includes(a.sha256)).length, 3, 'the upper-case hash is sent lower-case');
  const ops = await s.calls();
  assert.deepEqual(ops['GET /files/{id}/behaviours'], { calls: 8, units: { api_requests: 8 } });

  const store = openStore(s.config.store, s.config);
  cleanup(() => store.close());
  assert.deepEqual(await store.sink.query('sha256', a.sha256), idsOf(a));
  assert.deepEqual(await store.sink.query('sha256', b.sha256), idsOf(b));
  assert.equal(await store.sink.count(), 8);
  const [entry] = await store.batches.get([lookupBatch(a.sha256)]);
  assert.equal(entry?.status, 'ok');
  assert.equal(entry?.source, 'lookup');
  const doc = await store.sink.get(idsOf(a)[0] as string);
  assert.equal(doc?.sha256, a.sha256);
  assert.equal(typeof doc?.pivots, 'object');
});

test('a second lookup skips the hashes an earlier run finished, spends nothing on them, and --refresh fetches them again', async () => {
  const a = makeFakeFile('resume-a', { behaviours: 3 });
  const b = makeFakeFile('resume-b', { behaviours: 1 });
  const s = await setup([a, b]);
  const first = await runLookupCommand([a.sha256], {}, s.ctx);
  assert.equal(first?.api_units, 2);
  s.account.summary(first?.api_units);
  const second = await runLookupCommand([a.sha256, b.sha256], {}, s.ctx);
  assert.deepEqual(second?.counts, { skipped: 1, ok: 1 });
  assert.deepEqual(second?.hashes[0], {
    given: a.sha256,
    hash: a.sha256,
    kind: 'sha256',
    outcome: 'skipped',
    reports: 3,
    indexed: 3,
    rejected: 0,
  });
  assert.equal(second?.api_units, 1);
  s.account.summary(second?.api_units);
  assert.equal(s.fake.requests.filter((r) => r.path.includes(a.sha256)).length, 2, 'no request for the finished hash');
  const third = await runLookupCommand([a.sha256], { refresh: true }, s.ctx);
  assert.deepEqual(third?.counts, { ok: 1 });
  s.account.summary(third?.api_units);
  assert.equal(s.fake.requests.filter((r) => r.path.includes(a.sha256)).length, 4);
  assert.deepEqual((await s.calls())['GET /files/{id}/behaviours'], { calls: 5, units: { api_requests: 5 } });
});

test('429 with Retry-After, a 503 and a page cut mid-body are retried; the store ends exact and the ledger counts every request sent', async () => {
  const a = makeFakeFile('faults-a', { behaviours: 5 });
  const s = await setup([a]);
  s.fake.setFaults({ burst: { status: 429, count: 2, retryAfterS: 1, paths: 'all' }, resetMidBody: { times: 1 } });
  const started = Date.now();
  // --force: no allowance read first, so the faults hit the lookup's own requests
  const summary = await runLookupCommand([a.sha256], { json: true, force: true }, s.ctx);
  assert.ok(Date.now() - started >= 2000, 'Retry-After was honoured');
  assert.deepEqual(summary?.counts, { ok: 1 });
  assert.equal(summary?.documents.indexed, 5);
  const store = openStore(s.config.store, s.config);
  cleanup(() => store.close());
  assert.deepEqual(await store.sink.query('sha256', a.sha256), idsOf(a));
  const answered = s.fake.requests.filter((r) => r.path.startsWith(BEHAVIOURS) && r.status !== 0);
  // 3 pages + 2 refused (429) + 1 cut page sent again
  assert.equal(answered.length, 6);
  assert.equal(answered.filter((r) => r.status === 429).length, 2);
  assert.equal(summary?.api_units, 6);
  s.account.summary(summary?.api_units);
  assert.deepEqual((await s.calls())['GET /files/{id}/behaviours'], { calls: 6, units: { api_requests: 6 } });
  s.fake.setFaults({ burst: { status: 503, count: 1, paths: 'all' } });
  const again = await runLookupCommand([a.sha256], { refresh: true }, s.ctx);
  assert.deepEqual(again?.counts, { ok: 1 });
  s.account.summary(again?.api_units);
});

test('--dry-run prints the estimate and calls nothing; --max-api-units stops a file mid-way and says so', async () => {
  const a = makeFakeFile('budget-a', { behaviours: 5 });
  const s = await setup([a]);
  const out: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => (out.push(String(chunk)), true)) as typeof process.stdout.write;
  try {
    assert.equal(await runLookupCommand([a.sha256, 'bad'], { dryRun: true }, s.ctx), undefined);
  } finally {
    process.stdout.write = write;
  }
  assert.match(out.join(''), /estimated API units: at least 1\b/);
  assert.match(out.join(''), /dry run: nothing was called/);
  assert.equal(s.fake.requests.length, 0);
  assert.deepEqual((await s.calls()) ?? {}, {}, 'nothing on the ledger');

  const summary = await runLookupCommand([a.sha256], { maxApiUnits: '2' }, s.ctx);
  assert.deepEqual(summary?.counts, { budget: 1 });
  assert.match(summary?.hashes[0]?.error ?? '', /^BUDGET_EXCEEDED: .*--max-api-units 2/);
  assert.equal(summary?.api_units, 2);
  s.account.summary(summary?.api_units);
  assert.equal(s.fake.requests.filter((r) => r.path.startsWith(BEHAVIOURS)).length, 2);
  assert.deepEqual((await s.calls())['GET /files/{id}/behaviours'], { calls: 2, units: { api_requests: 2 } });
});

test('refused credentials stop the whole lookup with GTI_AUTH', async () => {
  const a = makeFakeFile('auth-a', { behaviours: 1 });
  const s = await setup([a], { gti: { apiKey: 'wrong-key' } });
  await assert.rejects(runLookupCommand([a.sha256], {}, s.ctx), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'GTI_AUTH');
    assert.ok(!err.message.includes('wrong-key'), 'the key never appears in an error');
    return true;
  });
  assert.equal(s.fake.requests.filter((r) => r.status === 401).length, 1);
});

/** A lookup of `hashes` (1 unit each) refused before any call but the allowance's read, `left` units being left today. */
async function refusedForBudget(s: Awaited<ReturnType<typeof setup>>, hashes: string[], left: number): Promise<void> {
  await assert.rejects(runLookupCommand(hashes, {}, s.ctx), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'BUDGET_EXCEEDED');
    assert.ok(err.message.includes(`estimate (${hashes.length} API units) exceeds the ${left} units left today; use --force`), err.message);
    return true;
  });
  assert.deepEqual(
    s.fake.requests.map((r) => r.path),
    ['/api/v3/users/analyst/overall_quotas'],
  );
}

test('a lookup whose estimate exceeds what is left of the daily allowance is refused without --force (the allowance read costs 0 units)', async () => {
  const a = makeFakeFile('daily-a', { behaviours: 1 });
  const b = makeFakeFile('daily-b', { behaviours: 1 });
  const s = await setup([a, b], {}, { analyst: { api_requests_daily: { user: { allowed: 500, used: 499 } } } });
  await refusedForBudget(s, [a.sha256, b.sha256], 1);
  const forced = await runLookupCommand([a.sha256, b.sha256], { force: true }, s.ctx);
  assert.deepEqual(forced?.counts, { ok: 2 });
  s.account.summary(forced?.api_units);
  const ops = await s.calls();
  assert.deepEqual(ops['GET /users/{id}/overall_quotas'], { calls: 1, units: {} });
  assert.deepEqual(ops['GET /files/{id}/behaviours'], { calls: 2, units: { api_requests: 2 } });
});

test("the group's daily quota, shared by its members, bounds a lookup too: refused without --force when the group has less left than the user", async () => {
  const a = makeFakeFile('group-a', { behaviours: 1 });
  const b = makeFakeFile('group-b', { behaviours: 1 });
  const s = await setup(
    [a, b],
    {},
    {
      analyst: { api_requests_daily: { user: { allowed: 1000, used: 10 }, group: { allowed: 5000, used: 5000, inherited_from: 'soc' } } },
    },
  );
  await refusedForBudget(s, [a.sha256, b.sha256], 0);
  s.account.summary(0);
});

test('a lookup interrupted after fetching is finished by the next run from the queued chunks, at no cost; chunks lost from Redis are fetched again', async () => {
  const a = makeFakeFile('interrupted-a', { behaviours: 3 });
  const b = makeFakeFile('interrupted-b', { behaviours: 3 });
  const s = await setup([a, b]);
  const log = createLogger('silent');
  // a lookup worker alone: the reports are fetched and queued, nothing stores them
  const fetchOnly = async (hash: string): Promise<void> => {
    const store = openStore(s.config.store, s.config);
    const queues = createQueues(s.config.redisUrl as string, s.config);
    const worker = new LookupWorker({ redisUrl: s.config.redisUrl as string, config: s.config, store, queues, log });
    worker.start();
    const q = createLookupQueue(queues, s.config);
    await q.add('lookup', { hash, run: 'interrupted' }, { jobId: lookupJobId(hash) });
    for (let i = 0; i < 200; i++) {
      const [e] = await store.batches.get([lookupBatch(hash)]);
      if (e?.status === 'pending') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await worker.stop();
    await q.close();
    if (hash === b.sha256) await queues.index.obliterate({ force: true }); // Redis lost the chunks
    await queues.close();
    await store.close();
  };
  const pages = (f: FakeFile): number => s.fake.requests.filter((r) => r.path.includes(f.sha256)).length;

  await fetchOnly(a.sha256);
  assert.equal(pages(a), 2);
  const resumed = await runLookupCommand([a.sha256], { force: true }, s.ctx);
  assert.deepEqual(resumed?.counts, { ok: 1 });
  assert.equal(resumed?.api_units, 0);
  assert.equal(pages(a), 2, 'nothing fetched again');

  await fetchOnly(b.sha256);
  const refetched = await runLookupCommand([b.sha256], { force: true }, s.ctx);
  assert.deepEqual(refetched?.counts, { ok: 1 });
  assert.equal(pages(b), 4, 'fetched again once its chunks were gone');

  const store = openStore(s.config.store, s.config);
  cleanup(() => store.close());
  assert.deepEqual(await store.sink.query('sha256', a.sha256), idsOf(a));
  assert.deepEqual(await store.sink.query('sha256', b.sha256), idsOf(b));
});
