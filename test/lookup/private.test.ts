import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'vitest';
import { lookupPrivateFiles } from '../../src/lookup/index.js';
import { createRedis } from '../../src/queue/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { openStore } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { makeFakeFile, startFakeGti, type FakeFile } from '../support/fakeGti.js';

const KEY = 'private-key-51aa';

async function setup(files: FakeFile[], privateLicence = true) {
  const dir = tempDir();
  const fake = await startFakeGti({ apiKey: KEY, files, privateLicence });
  cleanup(() => fake.close());
  const config = await testConfig(dir, {
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', xTool: 'acme.hunt.1.0', backoffMs: 20 },
  });
  const redis = createRedis(config.redisUrl as string, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const account = accountApi(fake, config);
  const ledger = new QuotaLedger(redis, config.queuePrefix);
  const ops = async () => (await ledger.usage({ period: 'day', user: 'analyst' }))[0]?.operations ?? {};
  return { dir, fake, config, redis, store, ops, account };
}

test('private lookup stores the report with gti_assessment (x-tool sent), apart from behaviours; non-SHA-256 input costs nothing and is never on the ledger', async () => {
  const f = makeFakeFile('private-a', { withPrivate: true });
  const g = makeFakeFile('private-b', { withPrivate: true });
  const s = await setup([f, g]);
  const unknown = randomBytes(32).toString('hex');
  const summary = await lookupPrivateFiles({
    config: s.config,
    redis: s.redis,
    store: s.store,
    hashes: [f.sha256.toUpperCase(), f.md5, g.sha1, 'zz', unknown, g.sha256],
    run: 'r1',
  });
  assert.deepEqual(summary.counts, { invalid: 3, stored: 2, not_found: 1 });
  assert.deepEqual(
    summary.files.filter((x) => x.outcome === 'invalid').map((x) => [x.given, /SHA-256 only/.test(x.error ?? '')]),
    [
      [f.md5, true],
      [g.sha1, true],
      ['zz', true],
    ],
  );
  assert.match(summary.files.find((x) => x.given === f.md5)?.error ?? '', /this is an MD5/);
  assert.equal(summary.api_units, 3);
  s.account.summary(summary.api_units);
  // only the three SHA-256 were asked, each with the x-tool header; nothing else reached the service
  const asked = s.fake.requests.filter((r) => r.path.startsWith('/api/v3/private/files/'));
  assert.deepEqual(
    asked.map((r) => [r.path.slice('/api/v3/private/files/'.length), r.xTool, r.hadKey]),
    [
      [f.sha256, 'acme.hunt.1.0', true],
      [unknown, 'acme.hunt.1.0', true],
      [g.sha256, 'acme.hunt.1.0', true],
    ],
  );
  assert.equal(s.fake.requests.length, 3);
  assert.deepEqual(await s.ops(), { 'GET /private/files/{id}': { calls: 3, units: { api_requests: 3 } } });

  const doc = await s.store.privateFiles.get(f.sha256);
  assert.ok(doc);
  assert.equal(doc.type, 'private_file');
  assert.equal(doc.sha256, f.sha256);
  assert.equal(doc.md5, f.md5);
  assert.deepEqual(doc.gti_assessment, f.gtiAssessment);
  assert.equal(doc.magic, f.private?.magic);
  assert.deepEqual(doc.trid, f.private?.trid);
  assert.deepEqual(doc.exiftool, f.private?.exiftool);
  assert.deepEqual(doc.tags, f.private?.tags);
  assert.ok('popular_threat_classification' in doc.attributes, 'unknown attributes are kept');
  // kept apart: no behaviour document, and private queries find it by each hash
  assert.equal(await s.store.sink.count(), 0);
  assert.deepEqual(await s.store.privateFiles.query('md5', f.md5.toUpperCase()), [f.sha256]);
  assert.deepEqual(await s.store.privateFiles.query('sha1', f.sha1), [f.sha256]);
  assert.deepEqual(await s.store.privateFiles.query('vhash', String(f.private?.vhash)), [f.sha256]);
});

test('private lookup: a 403 ends the command with one message about the Private Scanning licence; query and get show private files marked as such', async () => {
  const f = makeFakeFile('private-cli', { withPrivate: true, behaviours: 1 });
  const s = await setup([f]);
  const env = {
    REDIS_URL: s.config.redisUrl as string,
    SANDTRAIL_QUEUE_PREFIX: s.config.queuePrefix,
    SANDTRAIL_STORE: s.config.store,
    GTI_APIKEY: KEY,
    GTI_BASE_URL: s.fake.baseUrl,
  };
  const ok = await runCli(['private', 'lookup', f.sha256, f.md5, '--json'], { env });
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stderr, /refused ".{32}": GET \/private\/files\/\{id\} takes a SHA-256 only/);
  assert.deepEqual(JSON.parse(ok.stdout).counts, { invalid: 1, stored: 1 });
  assert.ok(!ok.stdout.includes(KEY) && !ok.stderr.includes(KEY));

  const q = await runCli(['query', '--md5', f.md5, '--json'], { env });
  assert.deepEqual(JSON.parse(q.stdout), [`private:${f.sha256}`]);
  const qs = await runCli(['query', '--sha256', f.sha256], { env });
  assert.equal(qs.stdout, `private:${f.sha256}\n`);
  const got = await runCli(['get', `private:${f.sha256}`, '--json'], { env });
  const doc = JSON.parse(got.stdout);
  assert.equal(doc.private, true);
  assert.equal(doc.id, f.sha256);

  const denied = await startFakeGti({ apiKey: KEY, files: [f], privateLicence: false });
  cleanup(() => denied.close());
  s.account.fake(denied);
  const r = await runCli(['private', 'lookup', f.sha256, makeFakeFile('other', { withPrivate: true }).sha256], {
    env: { ...env, GTI_BASE_URL: denied.baseUrl },
  });
  assert.equal(r.code, 1);
  assert.equal(r.stderr.match(/Private Scanning licence/g)?.length, 1, r.stderr);
  assert.equal(denied.requests.length, 1, 'stops at the first 403: no retry, no further hash');
});

test('the budget stops a private lookup: what was read stays stored and is reported, the rest is reported budget, exit 1', async () => {
  const files = ['private-c', 'private-d', 'private-e'].map((n) => makeFakeFile(n, { withPrivate: true }));
  const s = await setup(files);
  const summary = await lookupPrivateFiles({
    config: s.config,
    redis: s.redis,
    store: s.store,
    hashes: files.map((f) => f.sha256),
    run: 'r-budget',
    maxApiUnits: 1,
  });
  assert.deepEqual(
    summary.files.map((f) => f.outcome),
    ['stored', 'budget', 'budget'],
  );
  assert.match(summary.files[1]?.error ?? '', /^BUDGET_EXCEEDED: /);
  assert.equal(summary.api_units, 1);
  assert.ok(await s.store.privateFiles.get(files[0]!.sha256));
  assert.equal(s.fake.requests.filter((r) => r.path.startsWith('/api/v3/private/files/')).length, 1);
  s.account.summary(summary.api_units);
});
