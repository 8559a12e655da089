import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'vitest';
import { runLookupCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { fetchBehaviour, lookupPrivateFiles } from '../../src/lookup/index.js';
import { createRedis } from '../../src/queue/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { openStore } from '../../src/store/index.js';
import { accountApi, ledgerTotals, serverTotals } from '../support/apiAccounting.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { makeFakeFile, startFakeGti, type FakeFile } from '../support/fakeGti.js';

const KEY = 'accounting-key-2c7b';

async function setup(files: FakeFile[]) {
  const dir = tempDir();
  const fake = await startFakeGti({ apiKey: KEY, files });
  cleanup(() => fake.close());
  const config = await testConfig(dir, {
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', backoffMs: 20, maxRetries: 4 },
    lookup: { pageSize: 2, backoffMs: 50 },
  });
  const account = accountApi(fake, config);
  const redis = createRedis(config.redisUrl as string, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  return { fake, config, account, redis, store, ctx: { config, log: createLogger('silent') } };
}

test('a lookup page request reset before any answer is sent again; the summary counts only what the service answered, as the ledger does', async () => {
  const a = makeFakeFile('acct-reset', { behaviours: 3 });
  const s = await setup([a]);
  s.fake.setFaults({ resetApiBeforeHeaders: 1 });
  const summary = await runLookupCommand([a.sha256], { force: true }, s.ctx);
  assert.deepEqual(summary?.counts, { ok: 1 });
  assert.equal(summary?.documents.indexed, 3);
  assert.equal(s.fake.faults.resetApiBeforeHeaders, 0, 'the fault was used');
  // three requests reached the server, two were answered (two pages): two units, not three
  assert.equal(s.fake.countFor('/api/v3/files/'), 3);
  assert.equal(s.fake.countFor('/api/v3/files/', 0), 1);
  assert.deepEqual(serverTotals([s.fake]), { 'GET /files/{id}/behaviours': { calls: 2, units: 2 } });
  assert.deepEqual(await ledgerTotals([s.config]), serverTotals([s.fake]));
  assert.equal(summary?.api_units, 2);
  s.account.summary(summary?.api_units);
  // the request that got no answer is on the ledger all the same: in the audit stream and counted apart, at 0 units
  const ledger = new QuotaLedger(s.redis, s.config.queuePrefix);
  const lost = (await ledger.audit(100)).filter((e) => e.answered === false);
  assert.deepEqual(
    lost.map((e) => [e.op, e.units]),
    [['GET /files/{id}/behaviours', {}]],
  );
  const [day] = await ledger.usage({ period: 'day', user: 'analyst' });
  assert.deepEqual(day?.operations['GET /files/{id}/behaviours'], { calls: 2, units: { api_requests: 2 }, unanswered: 1 });
});

test('a single behaviour, its relationships and a private report cut mid-body or reset are fetched again; summary, ledger and server agree', async () => {
  const f = makeFakeFile('acct-single', { withPrivate: true });
  const s = await setup([f]);
  const id = String(f.behaviours[0]?.id);
  // the first request reset before any answer, the report cut twice, a technique page cut
  s.fake.setFaults({
    resetMidObject: { paths: '/api/v3/file_behaviours/', times: 2 },
    resetApiBeforeHeaders: 1,
    resetMidBody: { paths: '/api/v3/file_behaviours/', times: 1 },
  });
  const r = await fetchBehaviour({ config: s.config, redis: s.redis, store: s.store, id, relationships: true, run: 'acct-fetch' });
  assert.equal(r.status, 'stored');
  assert.equal(r.relationships.file, 1);
  assert.ok((r.relationships.attack_techniques ?? 0) >= 1);
  assert.deepEqual(s.fake.faults.resetMidObject?.times, 0);
  assert.deepEqual(s.fake.faults.resetMidBody?.times, 0);
  const doc = await s.store.sink.get(id);
  assert.equal((doc?.relationships as { file: { data: { id: string } } }).file.data.id, f.sha256);

  s.fake.setFaults({ resetMidObject: { paths: '/api/v3/private/', times: 1 }, resetApiBeforeHeaders: 1 });
  const p = await lookupPrivateFiles({ config: s.config, redis: s.redis, store: s.store, hashes: [f.sha256], run: 'acct-private' });
  assert.deepEqual(p.counts, { stored: 1 });
  assert.equal((await s.store.privateFiles.get(f.sha256))?.md5, f.md5);

  const server = serverTotals([s.fake]);
  // the report: reset (unanswered), cut, cut, whole; the private report: reset, cut, whole
  assert.equal(server['GET /file_behaviours/{id}']?.calls, 3);
  assert.equal(server['GET /private/files/{id}']?.calls, 2);
  assert.deepEqual(await ledgerTotals([s.config]), server);
  const units = Object.values(server).reduce((n, o) => n + o.units, 0);
  assert.equal(r.apiUnits + p.api_units, units);
  s.account.summary(r.apiUnits).summary(p.api_units);
});

test('a lookup against a server that takes connections and never answers ends within gti.timeoutMs per try, naming the timeout', async () => {
  const silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => (silent.closeAllConnections(), silent.close(() => resolve()))));
  const dir = tempDir();
  const config = await testConfig(dir, {
    gti: {
      apiKey: KEY,
      baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/api/v3`,
      timeoutMs: 300,
      maxRetries: 1,
      backoffMs: 20,
    },
    lookup: { attempts: 1, backoffMs: 50 },
  });
  const started = Date.now();
  const summary = await runLookupCommand(['a'.repeat(64)], { force: true }, { config, log: createLogger('silent') });
  assert.ok(Date.now() - started < 15_000, `${Date.now() - started} ms`);
  assert.deepEqual(summary?.counts, { failed: 1 });
  assert.match(JSON.stringify(summary?.hashes), /no answer within 300 ms \(gti\.timeoutMs\)/);
});
