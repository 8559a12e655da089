import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { decodeStream, normalizeAndSerialize, readLines } from '../../src/feed/index.js';
import { createLogger } from '../../src/log/index.js';
import { createRedis } from '../../src/queue/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { tempDir, testConfig, cleanup } from '../support/env.js';
import { startFakeGti } from '../support/fakeGti.js';
import { assertNewestWins, expectedDead, storeContents } from '../support/storeContents.js';
import { addMinutes, msToMinute } from '../../src/minute/index.js';

const KEY = 'test-key-3f9a0c1d';
// two days ago, on the hour: within the feed's 7 days, where a minute not available yet still may be
const start = msToMinute(Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 86_400_000);

async function setup(over: { missingMinutes?: string[]; start?: string } = {}) {
  const dir = tempDir();
  const manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 5,
    start: over.start ?? start,
    minutes: 8,
    perMinute: 20,
    malformedRate: 0.05,
    bigRate: 0.05,
    ...over,
  });
  const fake = await startFakeGti({ apiKey: KEY, feedDir: join(dir, 'feed') });
  cleanup(() => fake.close());
  const config = await testConfig(dir, {
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, xTool: 'acme.sandtrail.0.1', user: 'svc', group: 'soc' },
    feed: { missingRetries: 2, missingRetryDelayMs: 150, notAvailableDelayMs: 150, rateLimitDelayMs: 150, backoffMs: 100, attempts: 5 },
  });
  const account = accountApi(fake, config);
  return { dir, manifest, fake, config, account, ctx: { config, log: createLogger('silent') } };
}

test('backfill --source api follows the 302, survives 404 grace, 429, a connection reset and a cut download, and stores exactly the feed', async () => {
  const missing = addMinutes(start, 4);
  const s = await setup({ missingMinutes: [missing] });
  s.fake.setFaults({
    notFoundTimes: { [addMinutes(start, 1)]: 1 },
    burst: { status: 429, count: 2, retryAfterS: 1, paths: 'feed' },
    truncate: { minutes: [addMinutes(start, 2)], times: 1, atFraction: 0.5 },
    resetBeforeHeaders: 1,
  });
  const run = await runBackfillCommand({ source: 'api', from: start, to: addMinutes(start, 7) }, s.ctx);
  assert.deepEqual(run.summary, {
    batches: { ok: 7, empty: 0, missing: 1, failed: 0, pending: 0 },
    records: { indexed: s.manifest.records, rejected: s.manifest.malformedLines },
    api_units: 0,
    failures: [],
    requeued: 0,
    interrupted: false,
  });
  s.account.summary(run.summary.api_units);
  const stored = storeContents(join(s.dir, 'store.db'));
  assert.deepEqual(stored.ids, s.manifest.expectedIds);
  assert.deepEqual(stored.dead, expectedDead(s.manifest));
  assertNewestWins(s.manifest, stored.lmd);

  // the missing minute was asked 1 + missingRetries times before being recorded
  const asked = s.fake.requests.filter((r) => r.path.endsWith(`/feeds/file_behaviours/${missing}`));
  assert.equal(asked.filter((r) => r.status === 404).length, 3);
  assert.ok(
    s.fake.requests.some((r) => r.status === 429),
    'rate limit was hit',
  );
  assert.ok(
    s.fake.requests.some((r) => r.status === 0),
    'a connection was reset',
  );
  assert.ok(
    s.fake.requests.every((r) => !r.path.startsWith('/api/') || r.hadKey),
    'every API request carried the key',
  );
  assert.ok(s.fake.requests.filter((r) => r.path.startsWith('/api/')).every((r) => r.xTool === 'acme.sandtrail.0.1'));

  // every feed request is on the ledger at 0 API units (rule 3); the key is nowhere in Redis
  const redis = createRedis(s.config.redisUrl!, { redisCluster: false });
  try {
    const ledger = new QuotaLedger(redis, s.config.queuePrefix);
    const [day] = await ledger.usage({ period: 'day', user: 'svc' });
    // answered requests: a connection reset before any answer is not a call the service counted
    const apiCalls = s.fake.requests.filter((r) => r.path.startsWith('/api/v3/feeds/') && r.status !== 0).length;
    assert.equal(day?.operations['GET /feeds/file_behaviours/{id}']?.calls, apiCalls);
    assert.deepEqual(day?.units, {});
    const keys = await redis.keys(`${s.config.queuePrefix}:*`);
    for (const k of keys) {
      const type = await redis.type(k);
      const dump =
        type === 'hash'
          ? JSON.stringify(await redis.hgetall(k))
          : type === 'string'
            ? await redis.get(k)
            : type === 'stream'
              ? JSON.stringify(await redis.xrange(k, '-', '+'))
              : '';
      assert.ok(!String(dump).includes(KEY), `API key found in Redis key ${k}`);
    }
  } finally {
    redis.disconnect();
  }
});

test('downloads sent chunked (no content-length), one of them cut, are read whole: every minute stored, none taken for an empty file', async () => {
  const s = await setup();
  s.fake.setFaults({ chunkedDownloads: true, truncate: { minutes: [addMinutes(start, 3)], times: 1, atFraction: 0.5 } });
  const run = await runBackfillCommand({ source: 'api', from: start, to: addMinutes(start, 7) }, s.ctx);
  assert.deepEqual(run.summary.batches, { ok: 8, empty: 0, missing: 0, failed: 0, pending: 0 });
  assert.deepEqual(run.summary.records, { indexed: s.manifest.records, rejected: s.manifest.malformedLines });
  s.account.summary(run.summary.api_units);
  const stored = storeContents(join(s.dir, 'store.db'));
  assert.deepEqual(stored.ids, s.manifest.expectedIds);
  assert.deepEqual(stored.dead, expectedDead(s.manifest));
  const downloads = s.fake.requests.filter((r) => r.path.startsWith('/download/minute/'));
  assert.equal(downloads.length, 9, 'the cut minute downloaded again');
});

test('a download answered 200 with no bytes is a bad transfer, fetched again: never a minute recorded empty', async () => {
  const s = await setup();
  const sized = addMinutes(start, 2);
  const chunked = addMinutes(start, 3);
  s.fake.setFaults({ emptyTimes: { [sized]: 1 } });
  const first = runBackfillCommand({ source: 'api', from: start, to: addMinutes(start, 2) }, s.ctx);
  const run = await first;
  s.fake.setFaults({ emptyTimes: { [chunked]: 2 }, chunkedDownloads: true });
  const run2 = await runBackfillCommand({ source: 'api', from: addMinutes(start, 3), to: addMinutes(start, 7) }, s.ctx);
  assert.deepEqual(run.summary.batches, { ok: 3, empty: 0, missing: 0, failed: 0, pending: 0 });
  assert.deepEqual(run2.summary.batches, { ok: 5, empty: 0, missing: 0, failed: 0, pending: 0 });
  const downloads = (m: string): number => s.fake.requests.filter((r) => r.path === `/download/minute/${m}`).length;
  assert.equal(downloads(sized), 2);
  assert.equal(downloads(chunked), 3);
  s.account.summary(run.summary.api_units + run2.summary.api_units);
  assert.deepEqual(storeContents(join(s.dir, 'store.db')).ids, s.manifest.expectedIds);
});

test('a download that does not decode is fetched again, a few times at most: a bad transfer once is stored whole, one always bad fails BATCH_CORRUPT', async () => {
  const s = await setup();
  const once = addMinutes(start, 1);
  const always = addMinutes(start, 5);
  s.fake.setFaults({ corruptTimes: { [once]: 1, [always]: 100 } });
  const run = await runBackfillCommand({ source: 'api', from: start, to: addMinutes(start, 7) }, s.ctx);
  assert.deepEqual(run.summary.batches, { ok: 7, empty: 0, missing: 0, failed: 1, pending: 0 });
  assert.match(run.summary.failures[0]?.reason ?? '', /^BATCH_CORRUPT: /);
  const downloads = (m: string): number => s.fake.requests.filter((r) => r.path === `/download/minute/${m}`).length;
  assert.equal(downloads(once), 2);
  assert.equal(downloads(always), 3, 'three tries, not feed.attempts (5)');

  // served whole again, the same backfill stores exactly the feed
  s.fake.setFaults({ corruptTimes: undefined });
  const again = await runBackfillCommand({ source: 'api', from: start, to: addMinutes(start, 7) }, s.ctx);
  assert.deepEqual(again.summary.batches, { ok: 8, empty: 0, missing: 0, failed: 0, pending: 0 });
  s.account.summary(run.summary.api_units + again.summary.api_units);
  const stored = storeContents(join(s.dir, 'store.db'));
  assert.deepEqual(stored.ids, s.manifest.expectedIds);
  assert.deepEqual(stored.dead, expectedDead(s.manifest));
});

test('NotAvailableYet for a minute older than the feed keeps (7 days) fails it at once, a 404 is missing at once; a 429 is said at warn with its wait', async () => {
  const old = '202611030000';
  const s = await setup({ start: old, missingMinutes: [addMinutes(old, 3)] });
  s.fake.setFaults({ notAvailableAfter: addMinutes(old, 6), burst: { status: 429, count: 1, retryAfterS: 1, paths: 'feed' } });
  const warned: string[] = [];
  const log = createLogger('warn', {}, { destination: { write: (l: string) => void warned.push(l) } });
  const run = await runBackfillCommand({ source: 'api', from: old, to: addMinutes(old, 7) }, { config: s.config, log });
  assert.deepEqual(run.summary.batches, { ok: 5, empty: 0, missing: 1, failed: 2, pending: 0 });
  for (const f of run.summary.failures) assert.match(f.reason, /^SOURCE_NOT_FOUND: .*older than the feed's 7 days/, f.reason);
  const asked = (m: string): number => s.fake.requests.filter((r) => r.path.endsWith(`/feeds/file_behaviours/${m}`)).length;
  assert.equal(asked(addMinutes(old, 7)), 1, 'asked once, not until the run is killed');
  assert.equal(asked(addMinutes(old, 3)), 1, "a 404 past the feed's 7 days is final: no grace period");
  assert.ok(
    warned.some((w) => w.includes('rate limited by the API')),
    warned.join('\n'),
  );
  s.account.summary(run.summary.api_units);
});

test('refused credentials stop the run with one clear message naming the setting, without a retry storm', async () => {
  const s = await setup();
  const bad = { config: { ...s.config, gti: { ...s.config.gti, apiKey: 'wrong-key-00' } }, log: s.ctx.log };
  await assert.rejects(
    runBackfillCommand({ source: 'api', from: start, to: addMinutes(start, 7) }, bad),
    (e: { code?: string; message: string }) => e.code === 'GTI_AUTH' && /GTI_APIKEY/.test(e.message) && !e.message.includes('wrong-key-00'),
  );
  assert.ok(s.fake.requests.length <= 3, `${s.fake.requests.length} requests before stopping`);
});

test('503 and 504 bursts and NotAvailableYet keep the minute until it is served', async () => {
  const s = await setup();
  s.fake.setFaults({ burst: { status: 503, count: 3, paths: 'feed' }, notAvailableAfter: addMinutes(start, 7) });
  const done = runBackfillCommand({ source: 'api', from: start, to: addMinutes(start, 7) }, s.ctx);
  // the last minute is not published yet: wait until it has been refused, then publish it
  for (let i = 0; i < 200 && !s.fake.requests.some((r) => r.status === 400); i++) await new Promise((r) => setTimeout(r, 50));
  s.fake.setFaults({ notAvailableAfter: undefined, burst: { status: 504, count: 1, paths: 'feed' } });
  const run = await done;
  assert.deepEqual(run.summary.batches, { ok: 8, empty: 0, missing: 0, failed: 0, pending: 0 });
  assert.deepEqual(storeContents(join(s.dir, 'store.db')).ids, s.manifest.expectedIds);
  assert.equal(s.fake.requests.filter((r) => r.status === 503).length, 3);
  assert.ok(
    s.fake.requests.some((r) => r.status === 400),
    'NotAvailableYet was answered and the minute kept',
  );
});

test('a batch truncated at rest on the server fails BATCH_CORRUPT after 3 downloads; a slow body and the other minutes are stored exactly', async () => {
  const s = await setup();
  const feedDir = join(s.dir, 'feed');
  const bad = addMinutes(start, 2);
  const slow = addMinutes(start, 3);
  const badFile = s.manifest.files.find((f) => f.minute === bad)!;
  // cut the stored file itself: the server sends it whole, every time
  const whole = readFileSync(join(feedDir, badFile.file));
  writeFileSync(join(feedDir, badFile.file), whole.subarray(0, Math.floor(whole.length * 0.6)));
  s.fake.setFaults({ slowBody: { minutes: [slow], bytesPerSecond: 64 * 1024 } });
  const run = await runBackfillCommand({ source: 'api', from: start, to: addMinutes(start, 7) }, s.ctx);
  assert.deepEqual(run.summary.batches, { ok: 7, empty: 0, missing: 0, failed: 1, pending: 0 });
  assert.deepEqual(
    run.summary.failures.map((f) => [f.batch, f.reason.split(':')[0]]),
    [[bad, 'BATCH_CORRUPT']],
  );
  assert.equal(
    s.fake.requests.filter((r) => r.path === `/download/minute/${bad}`).length,
    3,
    'a download that does not decode is fetched 3 times in all',
  );

  // the store holds exactly the records of the other minutes (newest version of each)
  const expected = new Set<string>();
  for (const f of s.manifest.files.filter((x) => x.minute !== bad)) {
    for await (const line of readLines(decodeStream(join(feedDir, f.file), 'bz2'), { maxLineBytes: 1 << 26, prefixBytes: 0 })) {
      if (line.kind !== 'text') continue;
      const r = normalizeAndSerialize(line.text);
      if ('doc' in r) expected.add(r.doc.id);
    }
  }
  assert.deepEqual(storeContents(join(s.dir, 'store.db')).ids, [...expected].sort());

  const redis = createRedis(s.config.redisUrl!, { redisCluster: false });
  try {
    const [day] = await new QuotaLedger(redis, s.config.queuePrefix).usage({ period: 'day', user: 'svc' });
    const apiCalls = s.fake.requests.filter((r) => r.path.startsWith('/api/v3/feeds/') && r.status !== 0).length;
    assert.equal(day?.operations['GET /feeds/file_behaviours/{id}']?.calls, apiCalls, 'the ledger counts every request the server saw');
  } finally {
    redis.disconnect();
  }
});
