import assert from 'node:assert/strict';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Redis } from 'ioredis';
import { test } from 'vitest';
import type { Config, ConfigInput } from '../../src/config/index.js';
import {
  DISK_FAIL_BYTES,
  DISK_WARN_BYTES,
  formatReport,
  judgeFreeSpace,
  judgeRedis,
  runDoctor,
  type CheckResult,
  type DoctorOptions,
  type DoctorReport,
} from '../../src/doctor/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { createElasticsearchClient, openStore } from '../../src/store/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { runCli } from '../support/cli.js';
import { cleanup, tempDir, testConfig, testRedisUrl, uniquePrefix } from '../support/env.js';
import { FakeElasticsearch } from '../support/fakeElasticsearch.js';
import { openRealStore, realCluster, type Reachable } from '../support/realElasticsearch.js';
import { startFakeGti } from '../support/fakeGti.js';
import { RedisServer } from '../support/redisServer.js';
import { damagePivotPages } from '../support/damageStore.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';

const cluster = await realCluster();

const KEY = 'k-doctor-secret-0123456789';
const WRONG_KEY = 'k-doctor-wrong-9876543210';
const QUOTAS = { alice: { api_requests_daily: { user: { allowed: 1000, used: 12 }, group: { allowed: 50000, used: 900 } } } };

async function doctor(config: Config, dir: string, over: Partial<DoctorOptions> = {}): Promise<DoctorReport> {
  return runDoctor(() => config, {
    nodeVersion: process.versions.node,
    engines: '>=20.10',
    pathEnv: process.env.PATH ?? '',
    cwd: dir,
    isRoot: false,
    ...over,
  });
}

function byId(r: DoctorReport, id: string): CheckResult {
  const c = r.checks.find((x) => x.id === id);
  assert.ok(c, `no check ${id} in ${JSON.stringify(r.checks.map((x) => x.id))}`);
  return c;
}

async function startRedis(o: { aof: boolean; args?: readonly string[] }): Promise<RedisServer> {
  const s = await RedisServer.start(o);
  cleanup(() => s.stop());
  return s;
}

/** A loopback port that takes connections and never answers (a frozen host), closed after the test. */
async function silentPort(): Promise<number> {
  const sockets = new Set<Socket>();
  const silent = createServer((s) => void sockets.add(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  cleanup(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  });
  return (silent.address() as { port: number }).port;
}

async function config(dir: string, over: ConfigInput = {}): Promise<Config> {
  return testConfig(dir, { artefacts: { dir: join(dir, 'artefacts') }, ...over });
}

test('a good installation passes every check: noeviction + AOF Redis, WAL SQLite, the right GTI key (0 units on the ledger), a decoder', async () => {
  const dir = tempDir();
  const redis = await startRedis({ aof: true });
  const gti = await startFakeGti({ apiKey: KEY, quotas: QUOTAS });
  cleanup(() => gti.close());
  const cfg = await config(dir, { redisUrl: redis.url, gti: { apiKey: KEY, baseUrl: gti.baseUrl, user: 'alice', group: 'soc' } });
  accountApi(gti, cfg);
  const store = openStore(cfg.store);
  await store.close();

  const r = await doctor(cfg, dir);
  assert.equal(r.ok, true, formatReport(r));
  for (const c of r.checks) {
    // only bzip2 on a machine is a warning, not a failure; every other check must pass outright
    if (c.id === 'decoder') assert.notEqual(c.status, 'fail');
    else assert.equal(c.status, 'pass', `${c.id}: ${c.detail}`);
    assert.equal(c.fix === undefined, c.status === 'pass', `${c.id}: fix iff not pass`);
  }
  const ids = r.checks.map((c) => c.id);
  for (const id of [
    'config',
    'node',
    'redis',
    'redis.policy',
    'redis.persistence',
    'redis.rights',
    'clock',
    'store',
    'store.journal',
    'store.disk',
    'gti',
    'decoder',
    'artefacts',
  ])
    assert.ok(ids.includes(id), `missing check ${id}`);
  assert.match(byId(r, 'store.journal').detail, /WAL/);
  assert.match(byId(r, 'redis.persistence').detail, /AOF on/);
  assert.match(byId(r, 'gti').detail, /988 of 1000/);

  const conn = new Redis(redis.url);
  cleanup(() => conn.disconnect());
  const [row] = await new QuotaLedger(conn, cfg.queuePrefix).usage({ period: 'day', user: 'alice' });
  assert.deepEqual(row?.operations['GET /users/{id}/overall_quotas'], { calls: 1, units: {} }, 'recorded at 0 units');
});

test('a Redis with allkeys-lru and no persistence: the policy fails with the fix, persistence warns', async () => {
  const dir = tempDir();
  const redis = await startRedis({ aof: false });
  const conn = new Redis(redis.url);
  cleanup(() => conn.disconnect());
  await conn.config('SET', 'maxmemory-policy', 'allkeys-lru');

  const r = await doctor(await config(dir, { redisUrl: redis.url }), dir);
  assert.equal(r.ok, false);
  const policy = byId(r, 'redis.policy');
  assert.equal(policy.status, 'fail');
  assert.match(policy.detail, /allkeys-lru/);
  assert.match(policy.fix ?? '', /CONFIG SET maxmemory-policy noeviction/);
  assert.match(policy.fix ?? '', /redis\.conf/);
  const persistence = byId(r, 'redis.persistence');
  assert.equal(persistence.status, 'warn');
  assert.match(persistence.detail, /neither AOF nor RDB.*loses its queued jobs/);
  assert.equal(byId(r, 'redis').status, 'pass');
  assert.match(formatReport(r), /^FAIL {2}Redis maxmemory-policy: .*\n {6}fix: run `CONFIG SET maxmemory-policy noeviction`/m);
});

test('the decoder the pipeline would use: none on PATH fails, only bzip2 warns', async () => {
  const dir = tempDir();
  const cfg = await config(dir);
  const empty = join(dir, 'empty-bin');
  mkdirSync(empty);
  const none = byId(await doctor(cfg, dir, { pathEnv: empty, extraDirs: [] }), 'decoder');
  assert.equal(none.status, 'fail');
  assert.match(none.fix ?? '', /apt-get install lbzip2/);

  const onlyBzip2 = join(dir, 'bzip2-bin');
  mkdirSync(onlyBzip2);
  symlinkSync('/usr/bin/bzip2', join(onlyBzip2, 'bzip2'));
  const slow = byId(await doctor(cfg, dir, { pathEnv: onlyBzip2, extraDirs: [] }), 'decoder');
  assert.equal(slow.status, 'warn');
  assert.match(slow.detail, /bzip2 \(.*bzip2-bin\/bzip2\)/);
});

test('GTI key: a refused key fails without ever being printed; no user warns; the right key passes', async () => {
  const dir = tempDir();
  const gti = await startFakeGti({ apiKey: KEY, quotas: QUOTAS });
  cleanup(() => gti.close());
  const gtiCfg = { baseUrl: gti.baseUrl, user: 'alice' };
  const account = accountApi(gti);

  const wrongCfg = await config(dir, { gti: { ...gtiCfg, apiKey: WRONG_KEY } });
  account.ledger(wrongCfg);
  const wrong = await doctor(wrongCfg, dir);
  const refused = byId(wrong, 'gti');
  assert.equal(refused.status, 'fail');
  assert.match(refused.detail, /the key is refused/);
  assert.match(refused.fix ?? '', /GTI_APIKEY/);
  assert.equal(wrong.ok, false);
  for (const out of [JSON.stringify(wrong), formatReport(wrong)])
    assert.ok(!out.includes(WRONG_KEY) && !out.includes(KEY), 'no key in the output');

  const noUser = byId(await doctor(await config(dir, { gti: { baseUrl: gti.baseUrl, apiKey: KEY } }), dir), 'gti');
  assert.equal(noUser.status, 'warn');
  assert.match(noUser.fix ?? '', /SANDTRAIL_GTI_USER/);

  const rightCfg = await config(dir, { gti: { ...gtiCfg, apiKey: KEY } });
  account.ledger(rightCfg);
  const right = byId(await doctor(rightCfg, dir), 'gti');
  assert.equal(right.status, 'pass', right.detail);
  assert.match(right.detail, /alice.*988 of 1000 API requests left today/);
  assert.equal(gti.requests.filter((q) => q.path === '/api/v3/users/alice/overall_quotas').length, 2);
});

test.skipIf('skip' in cluster)(
  'Elasticsearch store (real cluster): before es setup the setup check fails naming it; after, it passes, the lifecycle check says what deletes the days; an outdated template fails again',
  async () => {
    const real = cluster as Reachable;
    const fixture = openRealStore(real);
    cleanup(() => fixture.close());
    const url = real.url;
    const dir = tempDir();
    const prefix = fixture.prefix;
    const cfg = await config(dir, { store: `es:${url}`, elasticsearch: { indexPrefix: prefix } });

    const before = await doctor(cfg, dir);
    assert.equal(byId(before, 'store').status, 'pass');
    assert.match(byId(before, 'store').detail, /Elasticsearch [89]\.\d+\.\d+/);
    const missing = byId(before, 'store.setup');
    assert.equal(missing.status, 'fail');
    assert.match(missing.detail, /missing: .*component template .*read alias/);
    assert.match(missing.fix ?? '', /sandtrail es setup/);
    assert.equal(before.ok, false);

    const setup = await runCli(['es', 'setup'], { env: { SANDTRAIL_STORE: `es:${url}`, SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix } });
    assert.equal(setup.code, 0, setup.stderr);
    const checked = await doctor(cfg, dir);
    const after = byId(checked, 'store.setup');
    assert.equal(after.status, 'pass', after.detail);
    const lifecycle = byId(checked, 'store.lifecycle');
    assert.equal(lifecycle.status, 'pass', lifecycle.detail);
    const hasIlm = await fixture.admin.ilm.getStatus().then(
      () => true,
      () => false,
    );
    assert.match(
      lifecycle.detail,
      hasIlm ? new RegExp(`${prefix}-behaviours: retention off`) : /no ILM on this cluster: sandtrail deletes expired day indices itself/,
    );

    // a new store's locator is complete from its setup; one not yet filled is said, with the fix
    assert.equal(byId(checked, 'store.locator').status, 'pass', byId(checked, 'store.locator').detail);
    const client = createElasticsearchClient(url, { maxRetries: 0 });
    cleanup(() => client.close());
    await client.indices.putMapping({ index: `${prefix}-locator`, _meta: { complete: false } });
    const unfilled = byId(await doctor(cfg, dir), 'store.locator');
    assert.equal(unfilled.status, 'warn');
    assert.match(
      unfilled.detail,
      new RegExp(`${prefix}-locator is not yet filled: every write looks every behaviour up in every partition`),
    );
    assert.match(unfilled.fix ?? '', /sandtrail es setup/);

    // a template left by an older sandtrail (lower version, a field fewer)
    const name = `${prefix}-dead-letters`;
    const got = await client.indices.getIndexTemplate({ name });
    const t = got.index_templates[0]?.index_template as unknown as { template: { mappings: { properties: Record<string, unknown> } } };
    delete t.template.mappings.properties[Object.keys(t.template.mappings.properties)[0] as string];
    await client.transport.request({ method: 'PUT', path: `/_index_template/${name}`, body: t as unknown as Record<string, unknown> });
    const outdated = byId(await doctor(cfg, dir), 'store.setup');
    assert.equal(outdated.status, 'fail');
    assert.match(outdated.detail, new RegExp(`outdated: index template ${name} \\(mapped fields differ\\)`));
    assert.match(outdated.fix ?? '', /sandtrail es setup/);
  },
);

test('a host that accepts but never answers is bounded by the timeout', async () => {
  const port = await silentPort();
  const dir = tempDir();
  const started = Date.now();
  const r = await doctor(await config(dir, { redisUrl: `redis://:hunter22@127.0.0.1:${port}` }), dir, { timeoutMs: 400 });
  assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
  const redis = byId(r, 'redis');
  assert.equal(redis.status, 'fail');
  assert.ok(!JSON.stringify(r).includes('hunter22'), 'no Redis password in the output');
});

test('a ledger Redis down or silent is named by the GTI check, not the network to GTI; a wrong Redis password is said as such', async () => {
  const dir = tempDir();
  const gti = await startFakeGti({ apiKey: KEY, quotas: QUOTAS });
  cleanup(() => gti.close());
  const down = await startRedis({ aof: false });
  const downUrl = down.url;
  await down.stop();
  for (const redisUrl of [downUrl, `redis://127.0.0.1:${await silentPort()}`]) {
    const cfg = await config(dir, { redisUrl, gti: { baseUrl: gti.baseUrl, user: 'alice', apiKey: WRONG_KEY } });
    const c = byId(await doctor(cfg, dir, { timeoutMs: 1000 }), 'gti');
    assert.equal(c.status, 'warn', `${redisUrl}: ${c.detail}`);
    assert.match(c.detail, /quota ledger's Redis/);
    assert.match(c.fix ?? '', /Redis/);
  }
  assert.equal(gti.requests.length, 0, 'no upstream call without its ledger');

  const guarded = await startRedis({ aof: false, args: ['--user', 'sandtrail', 'on', '>right-pw', '~*', '&*', '+@all'] });
  const cfg = await config(dir, { redisUrl: guarded.url.replace('redis://', 'redis://sandtrail:wrong-pw@') });
  const r = await doctor(cfg, dir);
  const redis = byId(r, 'redis');
  assert.equal(redis.status, 'fail');
  assert.match(redis.detail, /refuses the credentials/);
  assert.match(redis.fix ?? '', /user and password/);
  assert.ok(!JSON.stringify(r).includes('wrong-pw'), 'no password in the output');
});

test('judgeRedis: CONFIG disabled falls back to INFO; clock skew thresholds; free space thresholds', () => {
  const base = { display: 'redis://h:6379', version: '7.2.4', aof: false, save: null, skewMs: 0 };
  const [version, policy, persistence, clock] = judgeRedis({ ...base, policy: { value: 'volatile-lru', via: 'INFO memory' } });
  assert.equal(version?.status, 'pass');
  assert.equal(policy?.status, 'fail');
  assert.match(policy?.detail ?? '', /volatile-lru \(INFO memory\)/);
  assert.equal(persistence?.status, 'warn');
  assert.match(persistence?.detail ?? '', /CONFIG is disabled/);
  assert.equal(clock?.status, 'pass');
  assert.equal(judgeRedis({ ...base, version: '6.0.16' })[0]?.status, 'fail');
  assert.equal(judgeRedis({ ...base, aof: false, save: '3600 1' })[2]?.status, 'pass');
  const skew = (ms: number): string | undefined => judgeRedis({ ...base, skewMs: ms })[3]?.status;
  assert.deepEqual([skew(1500), skew(-2500), skew(29_000), skew(31_000), skew(-45_000)], ['pass', 'warn', 'warn', 'fail', 'fail']);
  const disk = (n: number): string => judgeFreeSpace('d', 'Disk', n, '/x', 'it').status;
  assert.deepEqual(
    [disk(DISK_WARN_BYTES), disk(DISK_WARN_BYTES - 1), disk(DISK_FAIL_BYTES), disk(DISK_FAIL_BYTES - 1)],
    ['pass', 'warn', 'warn', 'fail'],
  );
});

test('sandtrail doctor --json: exit 0 with warnings only, the documented shape; exit 1 and FAIL lines on a failure', async () => {
  const dir = tempDir();
  const env = {
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_STORE: `sqlite:${join(dir, 'store.db')}`,
    SANDTRAIL_ARTEFACTS_DIR: join(dir, 'artefacts'),
  };
  const r = await runCli(['doctor', '--json'], { env });
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = JSON.parse(r.stdout) as { ok: unknown; checks: Record<string, unknown>[] };
  assert.deepEqual(Object.keys(out).sort(), ['checks', 'ok']);
  assert.equal(out.ok, true);
  assert.ok(out.checks.length >= 10);
  for (const c of out.checks) {
    assert.equal(typeof c.id, 'string');
    assert.equal(typeof c.title, 'string');
    assert.equal(typeof c.detail, 'string');
    assert.ok(['pass', 'warn', 'fail'].includes(c.status as string));
    assert.equal(typeof c.fix === 'string', c.status !== 'pass', `${String(c.id)}: fix iff not pass`);
  }

  // a misspelt variable: the configuration is valid, but not what was meant
  const misspelt = await runCli(['doctor', '--json'], { env: { ...env, SANDTRAIL_STOR: 'sqlite:/elsewhere.db' } });
  const config = (JSON.parse(misspelt.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks.find(
    (c) => c.id === 'config',
  );
  assert.equal(config?.status, 'warn', misspelt.stdout);
  assert.match(config?.detail ?? '', /SANDTRAIL_STOR \(did you mean SANDTRAIL_STORE\?\)/);

  const bad = await runCli(['doctor'], { env: { ...env, REDIS_URL: 'redis://127.0.0.1:1' } });
  assert.equal(bad.code, 1);
  assert.match(bad.stdout, /^FAIL {2}Redis: cannot reach Redis at redis:\/\/127\.0\.0\.1:1\/?: .*\n {6}fix: /m);
  assert.match(bad.stdout, /^PASS {2}Node\.js: /m);
});

test('doctor checks a SQLite store with quick_check: an intact store passes, one with damaged pages fails naming the file and how to recover', async () => {
  const dir = tempDir();
  const file = join(dir, 'store.db');
  const store = openStore(`sqlite:${file}`);
  const docs = Array.from({ length: 200 }, (_, i) =>
    makeDoc(i.toString(16).padStart(64, '0'), 'Zenbox', 1000 + i, { behash: `b${i % 7}`, dropped_sha256: [`${i}`.padStart(64, 'e')] }),
  );
  await store.sink.upsert(sinkDocs(docs));
  await store.close();
  const cfg = await config(dir, { store: `sqlite:${file}` });
  const intact = byId(await doctor(cfg, dir), 'store.integrity');
  assert.equal(intact.status, 'pass', intact.detail);
  assert.deepEqual([existsSync(`${file}-wal`), existsSync(`${file}-shm`)], [false, false], 'the check, a read, leaves no -wal or -shm');

  damagePivotPages(file);
  const report = await doctor(cfg, dir);
  const damaged = byId(report, 'store.integrity');
  assert.equal(damaged.status, 'fail', damaged.detail);
  assert.ok(damaged.detail.includes(file), damaged.detail);
  assert.match(damaged.detail, /damaged/);
  assert.match(damaged.fix ?? '', /\.recover/);
  assert.equal(report.ok, false);
});

test("another application's SQLite database fails doctor, naming its tables, as every command refuses it", async () => {
  const dir = tempDir();
  const file = join(dir, 'foreign.db');
  const db = new BetterSqlite3(file);
  db.exec('CREATE TABLE t (x); CREATE TABLE notes (y)');
  db.close();
  const report = await doctor(await config(dir, { store: `sqlite:${file}` }), dir);
  const c = byId(report, 'store.integrity');
  assert.equal(c.status, 'fail', c.detail);
  assert.match(c.detail, /holds no sandtrail store \(its tables: (t, notes|notes, t)\)/);
  assert.equal(report.ok, false);
  assert.deepEqual([existsSync(`${file}-wal`), existsSync(`${file}-shm`)], [false, false]);
});

test('doctor reads the Elasticsearch cluster health and disk watermarks, and fails on a full disk or a write block of sandtrail indices, naming the node or index and the fix', async () => {
  const fake = new FakeElasticsearch();
  cleanup(() => fake.close());
  const url = await fake.listen();
  const dir = tempDir();
  const prefix = `blk-${uniquePrefix()}`;
  const cfg = await config(dir, { store: `es:${url}`, elasticsearch: { indexPrefix: prefix } });
  const setup = await runCli(['es', 'setup'], { env: { SANDTRAIL_STORE: `es:${url}`, SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix } });
  assert.equal(setup.code, 0, setup.stderr);
  const good = await doctor(cfg, dir);
  assert.equal(byId(good, 'store.health').status, 'pass');
  assert.equal(byId(good, 'store.blocks').status, 'pass', byId(good, 'store.blocks').detail);

  assert.equal(byId(good, 'store.watermarks').status, 'pass');
  assert.match(byId(good, 'store.watermarks').detail, /at most 40% .*high watermark 90%, flood stage 95%/);
  fake.setDiskPercent(92);
  const high = byId(await doctor(cfg, dir), 'store.watermarks');
  assert.equal(high.status, 'warn');
  assert.match(high.detail, /fake-node 92% above the high disk watermark \(90%\)/);
  fake.setDiskPercent(96);
  const flooded = byId(await doctor(cfg, dir), 'store.watermarks');
  assert.equal(flooded.status, 'fail');
  assert.match(flooded.detail, /disk full: fake-node 96% at or above the flood-stage watermark/);
  fake.setDiskPercent(40);

  fake.setIndexSetting(`${prefix}-behaviours-000001`, 'blocks.read_only_allow_delete', 'true');
  const full = await doctor(cfg, dir);
  const blocks = byId(full, 'store.blocks');
  assert.equal(blocks.status, 'fail');
  assert.match(blocks.detail, new RegExp(`${prefix}-behaviours-000001 \\(read_only_allow_delete\\)`));
  assert.match(blocks.detail, /disk full/);
  assert.match(blocks.fix ?? '', /free disk space/);
  assert.equal(full.ok, false);

  fake.setIndexSetting(`${prefix}-behaviours-000001`, 'blocks.read_only_allow_delete', 'false');
  fake.setIndexSetting(`${prefix}-batches`, 'blocks.write', 'true');
  const blocked = byId(await doctor(cfg, dir), 'store.blocks');
  assert.equal(blocked.status, 'fail');
  assert.match(blocked.detail, new RegExp(`${prefix}-batches \\(write\\)`));
  assert.match(blocked.fix ?? '', /index\.blocks\.write/);
});

test('doctor checks the lifecycle policy against retention.days and the primary shard sizes of the daily behaviour indices', async () => {
  const fake = new FakeElasticsearch();
  cleanup(() => fake.close());
  const url = await fake.listen();
  const dir = tempDir();
  const prefix = `ilm-${uniquePrefix()}`;
  const env = { SANDTRAIL_STORE: `es:${url}`, SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: prefix, SANDTRAIL_RETENTION_DAYS: '30' };
  const cfg = await config(dir, { store: `es:${url}`, elasticsearch: { indexPrefix: prefix }, retention: { days: 30 } });
  const missing = byId(await doctor(cfg, dir), 'store.lifecycle');
  assert.equal(missing.status, 'fail');
  assert.match(missing.detail, new RegExp(`lifecycle policy ${prefix}-behaviours is missing`));
  assert.equal((await runCli(['es', 'setup'], { env })).code, 0);
  const good = await doctor(cfg, dir);
  assert.equal(byId(good, 'store.lifecycle').status, 'pass', byId(good, 'store.lifecycle').detail);
  assert.match(byId(good, 'store.lifecycle').detail, /a day index is deleted 31d after its date/);
  assert.equal(byId(good, 'store.shards').status, 'pass', byId(good, 'store.shards').detail);

  // the policy was set up for 30 days; this configuration says 7
  const other = await config(dir, { store: `es:${url}`, elasticsearch: { indexPrefix: prefix }, retention: { days: 7 } });
  const mismatch = byId(await doctor(other, dir), 'store.lifecycle');
  assert.equal(mismatch.status, 'fail');
  assert.match(mismatch.detail, /deletes a day index 31d after its date, retention\.days here means 8d after its date/);
  assert.match(mismatch.fix ?? '', /sandtrail es setup/);

  // a day that outgrew its one primary shard: 100 GB of primaries
  const day = `${prefix}-behaviours-2026.11.20`;
  const client = createElasticsearchClient(url, { maxRetries: 0 });
  cleanup(() => client.close());
  await client.indices.create({ index: day });
  fake.setStoreBytes(day, 100 * 1024 ** 3);
  const big = byId(await doctor(cfg, dir), 'store.shards');
  assert.equal(big.status, 'warn');
  assert.match(
    big.detail,
    new RegExp(`primary shards past 30gb: ${day.replace(/\./g, '\\.')} \\(100\\.0 GB per primary shard, 1 shard\\(s\\)\\)`),
  );
  assert.match(big.fix ?? '', /set elasticsearch\.shards to 4 or more/);
});

test('doctor fails the store paths a command would refuse: a missing directory, a parent that is a file, a directory as the store', async () => {
  const dir = tempDir();
  const notDir = join(dir, 'afile');
  writeFileSync(notDir, 'not a directory');
  const cases: [string, RegExp][] = [
    [join(dir, 'nodir', 'sub', 's.db'), /its directory .*nodir\/sub does not exist/],
    [join(notDir, 's.db'), /afile is not a directory/],
    [dir, /is a directory, not a store file/],
  ];
  for (const [path, why] of cases) {
    const store = byId(await doctor(await config(dir, { store: `sqlite:${path}` }), dir), 'store');
    assert.equal(store.status, 'fail', `${path}: ${store.detail}`);
    assert.match(store.detail, why);
  }
  // a new file in a directory that is there passes: the first command creates it
  const fresh = byId(await doctor(await config(dir, { store: `sqlite:${join(dir, 'new.db')}` }), dir), 'store');
  assert.equal(fresh.status, 'pass', fresh.detail);
});
