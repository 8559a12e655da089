import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createRedis } from '../../src/queue/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { test } from 'vitest';
import { accountApi, ledgerTotals, serverTotals } from '../support/apiAccounting.js';
import { startCli } from '../support/cli.js';
import { cleanup, tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';

const KEY = 'interrupt-units-key-51d0';

test('a lookup stopped by SIGINT counts in its summary the units its drain spent after the signal, as the ledger does', async () => {
  const file = makeFakeFile('interrupt-units', { behaviours: 12 });
  let signalled: () => void = () => undefined;
  const firstAnswer = new Promise<void>((resolve) => (signalled = resolve));
  const fake = await startFakeGti({ apiKey: KEY, files: [file], onRequest: () => signalled() });
  cleanup(() => fake.close());
  // the first two answers are 429 with Retry-After: 1 s, so the job is still under way when the
  // signal comes; the drain lets it fetch every page after the run has stopped waiting
  fake.setFaults({ burst: { status: 429, count: 2, retryAfterS: 1, paths: 'all' } });
  const redisUrl = await testRedisUrl();
  const queuePrefix = uniquePrefix();
  const account = accountApi(fake, { redisUrl, queuePrefix });
  const dir = tempDir();
  const { child, exited } = startCli(['lookup', file.sha256, '--json', '--store', `sqlite:${join(dir, 's.db')}`], {
    GTI_APIKEY: KEY,
    GTI_BASE_URL: fake.baseUrl,
    REDIS_URL: redisUrl,
    SANDTRAIL_QUEUE_PREFIX: queuePrefix,
    SANDTRAIL_LOOKUP_PAGE_SIZE: '2',
    SANDTRAIL_LOG_LEVEL: 'warn',
  });
  await firstAnswer;
  child.kill('SIGINT');
  const r = await exited;
  assert.equal(r.code, 130, r.stderr);
  const summary = JSON.parse(r.stdout) as { api_units: number; interrupted: boolean };
  assert.equal(summary.interrupted, true);
  // the drain fetched all six pages after the signal
  assert.equal(fake.countFor('/api/v3/files/', 200), 6, 'every page was fetched');
  const ledger = await ledgerTotals([{ redisUrl, queuePrefix }]);
  const units = Object.values(ledger).reduce((n, o) => n + o.units, 0);
  assert.deepEqual(ledger, serverTotals([fake]));
  assert.equal(summary.api_units, units);
  account.summary(summary.api_units);
}, 60_000);

test('a lookup stopped twice while its request hangs: the request is given up and on the ledger as unanswered, and the command ends', async () => {
  let asked: () => void = () => undefined;
  const requested = new Promise<void>((resolve) => (asked = resolve));
  // an API that takes requests and never answers them
  const hanging = createServer(() => asked());
  hanging.listen(0, '127.0.0.1');
  await once(hanging, 'listening');
  cleanup(() => (hanging.closeAllConnections(), new Promise<void>((resolve) => hanging.close(() => resolve()))));
  const redisUrl = await testRedisUrl();
  const queuePrefix = uniquePrefix();
  const { child, exited } = startCli(['lookup', 'ab'.repeat(32), '--json', '--store', `sqlite:${join(tempDir(), 's.db')}`], {
    GTI_APIKEY: KEY,
    GTI_BASE_URL: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/api/v3`,
    GTI_USER: 'analyst',
    SANDTRAIL_GTI_TIMEOUT_MS: '120000',
    REDIS_URL: redisUrl,
    SANDTRAIL_QUEUE_PREFIX: queuePrefix,
    SANDTRAIL_LOG_LEVEL: 'warn',
  });
  await requested;
  const t0 = Date.now();
  child.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 500));
  child.kill('SIGINT');
  const r = await exited;
  assert.equal(r.code, 130, r.stderr);
  assert.ok(Date.now() - t0 < 15_000, `ended ${Date.now() - t0} ms after the signal`);
  assert.match(r.stderr, /API calls still unanswered: given up, recorded on the ledger as unanswered/);
  const redis = createRedis(redisUrl, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const lost = (await new QuotaLedger(redis, queuePrefix).audit(10)).filter((e) => e.answered === false);
  assert.deepEqual(
    lost.map((e) => e.op),
    ['GET /files/{id}/behaviours'],
  );
}, 60_000);
