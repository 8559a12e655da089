import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { fetchBehaviour } from '../../src/lookup/index.js';
import { createRedis } from '../../src/queue/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { openStore } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { startStubApi } from '../support/stubApi.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';

const KEY = 'fetch-key-09bc';

/** A fake GTI API serving `name`'s file, and a store, a Redis client and accounting for it. */
async function rig(name: string, sandboxes: string[], lookup: { pageSize?: number } = {}) {
  const f = makeFakeFile(name, { sandboxes });
  const fake = await startFakeGti({ apiKey: KEY, files: [f] });
  cleanup(() => fake.close());
  const config = await testConfig(tempDir(), { gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', backoffMs: 20 }, lookup });
  const account = accountApi(fake, config);
  const redis = createRedis(config.redisUrl as string, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  return { f, fake, config, account, redis, store, id: String(f.behaviours[0]?.id) };
}

test('fetch stores one behaviour (its id has a space, sent encoded) with its file and attack_techniques relationships, 1 unit per request', async () => {
  const { f, fake, config, account, redis, store, id } = await rig('fetch-a', ['VirusTotal Jujubox', 'Zenbox'], { pageSize: 1 });
  assert.match(id, /_VirusTotal Jujubox$/);

  const r = await fetchBehaviour({ config, redis, store, id, relationships: true, run: 'f1' });
  assert.equal(r.status, 'stored');
  assert.equal(r.id, id);
  const techniques = r.relationships.attack_techniques ?? 0;
  assert.ok(techniques >= 1);
  assert.equal(r.relationships.file, 1);
  // the single report, the file, and one page per technique (limit 1)
  assert.equal(r.apiUnits, 2 + techniques);
  const paths = fake.requests.map((x) => x.path);
  assert.equal(paths[0], `/api/v3/file_behaviours/${encodeURIComponent(id)}`);
  assert.ok(paths.every((p) => !p.includes(' ')));
  const doc = await store.sink.get(id);
  assert.ok(doc);
  const rel = doc.relationships as { file: { data: { id: string } }; attack_techniques: { data: { id: string }[] } };
  assert.equal(rel.file.data.id, f.sha256);
  assert.equal(rel.attack_techniques.data.length, techniques);
  assert.ok(rel.attack_techniques.data.every((t) => /^T\d{4}/.test(t.id)));
  const ledger = new QuotaLedger(redis, config.queuePrefix);
  const ops = (await ledger.usage({ period: 'day', user: 'analyst' }))[0]?.operations ?? {};
  const calls = Object.values(ops).reduce((n, o) => n + o.calls, 0);
  const units = Object.values(ops).reduce((n, o) => n + (o.units.api_requests ?? 0), 0);
  assert.deepEqual([calls, units], [fake.requests.length, fake.requests.length]);

  // fetched again: the same version is rewritten (idempotent), the store still holds one document
  const again = await fetchBehaviour({ config, redis, store, id, run: 'f2' });
  assert.equal(again.status, 'stored');
  account.summary(r.apiUnits).summary(again.apiUnits);
  assert.equal(await store.sink.count(), 1);
});

test('sandtrail fetch: --dry-run calls nothing; an unknown behaviour is a clear error naming the id; a bad id is a usage error', async () => {
  const f = makeFakeFile('fetch-cli');
  const fake = await startFakeGti({ apiKey: KEY, files: [f] });
  cleanup(() => fake.close());
  const dir = tempDir();
  const config = await testConfig(dir);
  // the 404 of the unknown behaviour is a call too, on the ledger though in no summary
  accountApi(fake, config);
  const env = {
    REDIS_URL: config.redisUrl as string,
    SANDTRAIL_QUEUE_PREFIX: config.queuePrefix,
    SANDTRAIL_STORE: config.store,
    GTI_APIKEY: KEY,
    GTI_BASE_URL: fake.baseUrl,
  };
  const id = String(f.behaviours[1]?.id);
  const dry = await runCli(['fetch', id, '--relationships', '--dry-run'], { env });
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /estimated API units: at least 3 /);
  const dryJson = await runCli(['fetch', id, '--relationships', '--dry-run', '--json'], { env });
  assert.equal(dryJson.code, 0, dryJson.stderr);
  const estimate = JSON.parse(dryJson.stdout) as {
    dry_run: boolean;
    estimated_api_units: number;
    at_least: boolean;
    lines: { count: number }[];
  };
  assert.equal(estimate.dry_run, true);
  assert.equal(estimate.estimated_api_units, 3);
  assert.equal(estimate.at_least, true, 'further relationship pages are known only from the answers');
  assert.deepEqual(
    estimate.lines.map((l) => l.count),
    [1, 2],
  );
  assert.equal(fake.requests.length, 0);
  const ok = await runCli(['fetch', id, '--json'], { env });
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(JSON.parse(ok.stdout), { id, status: 'stored', relationships: {}, artefacts: [], api_units: 1 });
  const missing = await runCli(['fetch', `${'0'.repeat(64)}_Zenbox`], { env });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /404/);
  const bad = await runCli(['fetch', 'not-an-id'], { env });
  assert.equal(bad.code, 2);
  assert.ok(![ok, missing, bad, dry].some((x) => x.stdout.includes(KEY) || x.stderr.includes(KEY)));
});

test('fetch --relationships keeps the report when a relationship is not found (404): stored with that relationship empty', async () => {
  const f = makeFakeFile('fetch-gone', { behaviours: 1 });
  const report = f.behaviours[0] as { id: string };
  const base = `/api/v3/file_behaviours/${encodeURIComponent(report.id)}`;
  const api = await startStubApi((path) => {
    if (path === base) return { status: 200, body: { data: report } };
    if (path === `${base}/attack_techniques`) return { status: 200, body: { data: [{ type: 'attack_technique', id: 'T1055' }] } };
    return undefined; // the file relationship: 404
  });
  const store = `sqlite:${join(tempDir(), 's.db')}`;
  const env = { GTI_APIKEY: KEY, GTI_BASE_URL: api.baseUrl, SANDTRAIL_STORE: store };
  const r = await runCli(['fetch', report.id, '--relationships', '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(api.asked(`${base}/file`), 1, 'a 404 is not asked again');
  const got = await runCli(['get', report.id, '--json', '--store', store]);
  assert.equal(got.code, 0, got.stderr);
  const doc = JSON.parse(got.stdout) as { relationships: { file: { data: unknown }; attack_techniques: { data: unknown[] } } };
  assert.equal(doc.relationships.file.data, null);
  assert.equal(doc.relationships.attack_techniques.data.length, 1);
});

test('the budget reached while reading relationships keeps the report it paid for: stored, and the error names what was not read', async () => {
  const { fake, config, account, redis, store, id } = await rig('fetch-budget', ['Zenbox']);
  await assert.rejects(
    fetchBehaviour({ config, redis, store, id, relationships: true, run: 'f-budget', maxApiUnits: 1 }),
    (e: { code?: string; message: string }) =>
      e.code === 'BUDGET_EXCEEDED' && e.message.includes(`the report ${id} is stored without its relationships file, attack_techniques`),
  );
  assert.ok(await store.sink.get(id), 'the report paid for is stored');
  assert.equal(fake.requests.length, 1);
  account.summary(1);
});
