import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, utimesSync, writeFileSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { blobPath, fetchArtefact, type ArtefactKind } from '../../src/artefacts/index.js';
import { RunBudget } from '../../src/lookup/index.js';
import { createRedis } from '../../src/queue/index.js';
import { openStore } from '../../src/store/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { runCli } from '../support/cli.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { makeFakeFile, startFakeGti, type FakeFile } from '../support/fakeGti.js';

const KEY = 'fetch-artefact-key-0d3a';
const HAS: Record<ArtefactKind, string> = { pcap: 'has_pcap', evtx: 'has_evtx', memdump: 'has_memdump', html: 'has_html_report' };

/** A file with one behaviour that has exactly the artefacts of `sizes` (random bytes of those sizes). */
function fileWith(seed: string, sizes: Partial<Record<ArtefactKind, number>>): FakeFile {
  const f = makeFakeFile(seed, { behaviours: 1 });
  const b = f.behaviours[0] as Record<string, unknown>;
  const attrs = b.attributes as Record<string, unknown>;
  const bytes: Partial<Record<ArtefactKind, Buffer>> = {};
  for (const [kind, flag] of Object.entries(HAS) as [ArtefactKind, string][]) {
    const size = sizes[kind];
    attrs[flag] = size !== undefined;
    if (size !== undefined) bytes[kind] = randomBytes(size);
  }
  f.artefacts = { [String(b.id)]: bytes };
  return f;
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

test('sandtrail fetch --artefacts: a memdump cut mid-body is fetched again, stored whole, recorded on the document and listed; no partial file; units agree', async () => {
  const f = fileWith('fetch-art-cut', { memdump: 524_288 });
  const id = String(f.behaviours[0]?.id);
  const memdump = f.artefacts?.[id]?.memdump as Buffer;
  const fake = await startFakeGti({ apiKey: KEY, files: [f] });
  cleanup(() => fake.close());
  const dir = tempDir();
  const blobs = join(dir, 'blobs');
  const config = await testConfig(dir, { artefacts: { dir: blobs } });
  const account = accountApi(fake, config);
  const env = {
    REDIS_URL: config.redisUrl as string,
    SANDTRAIL_QUEUE_PREFIX: config.queuePrefix,
    SANDTRAIL_STORE: config.store,
    SANDTRAIL_ARTEFACTS_DIR: blobs,
    SANDTRAIL_GTI_BACKOFF_MS: '20',
    GTI_APIKEY: KEY,
    GTI_BASE_URL: fake.baseUrl,
  };
  // the first download sends 262,144 of its 524,288 bytes, then the connection is cut
  fake.setFaults({ truncateArtefact: { times: 1, atFraction: 0.5 } });
  const r = await runCli(['fetch', id, '--artefacts', 'memdump', '--json'], { env });
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.deepEqual(fake.faults.truncateArtefact, { times: 0, atFraction: 0.5 }, 'the fault was used');
  const path = blobPath(blobs, id, 'memdump');
  const out = JSON.parse(r.stdout) as { status: string; artefacts: unknown[]; api_units: number };
  assert.equal(out.status, 'stored');
  assert.deepEqual(out.artefacts, [{ kind: 'memdump', size: 524_288, path, skipped: false }]);
  assert.ok(readFileSync(path).equals(memdump), 'the file is whole');
  assert.deepEqual(filesUnder(blobs), [path.slice(blobs.length + 1)], 'no partial file survives');

  const list = await runCli(['artefacts', 'list', id, '--json'], { env });
  assert.equal(list.code, 0, list.stderr);
  const listed = JSON.parse(list.stdout) as { kind: string; size: number; sha256: string; source: string; path: string }[];
  assert.deepEqual(
    listed.map((a) => [a.kind, a.size, a.sha256, a.source, a.path]),
    [['memdump', 524_288, sha256(memdump), 'endpoint', path]],
  );
  // the sample hash in any case, as get takes it; an id the store does not hold is an error, as in get
  const sample = id.slice(0, 64);
  const upper = await runCli(['artefacts', 'list', `${sample.toUpperCase()}${id.slice(64)}`, '--json'], { env });
  assert.deepEqual(JSON.parse(upper.stdout), listed);
  const unknown = await runCli(['artefacts', 'list', `${'0'.repeat(64)}${id.slice(64)}`], { env });
  assert.equal(unknown.code, 1, unknown.stderr);
  assert.match(unknown.stderr, /nothing with id/);
  const got = await runCli(['get', id, '--json'], { env });
  const doc = JSON.parse(got.stdout) as { artefacts?: Record<string, { size: number; sha256: string }> };
  assert.equal(doc.artefacts?.memdump?.size, 524_288, 'recorded on the document');

  // the report, the endpoint answered twice (the first body cut): 3 requests, 3 units everywhere
  assert.equal(fake.countFor('/download/artefact/'), 2);
  assert.deepEqual(fake.operations(), { 'GET /file_behaviours/{id}': 1, 'GET /file_behaviours/{id}/memdump': 2 });
  assert.equal(out.api_units, 3);
  account.summary(out.api_units);
});

test('an inline artefact download is retried after a 429 (its Retry-After waited), a 503 and a reset body, and never leaves a partial file', async () => {
  const f = fileWith('fetch-art-faults', { pcap: 40_000, evtx: 30_000 });
  const id = String(f.behaviours[0]?.id);
  const fake = await startFakeGti({ apiKey: KEY, files: [f] });
  cleanup(() => fake.close());
  const dir = tempDir();
  const blobs = join(dir, 'blobs');
  const config = await testConfig(dir, {
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', backoffMs: 20, maxRetries: 4 },
    artefacts: { dir: blobs },
  });
  const account = accountApi(fake, config);
  const redis = createRedis(config.redisUrl as string, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const data = (kind: ArtefactKind) =>
    ({ behaviourId: id, sha256: f.sha256, sandbox: 'VirusTotal Jujubox', kind, source: 'endpoint', run: `inline-${kind}` }) as const;

  fake.setFaults({ burst: { status: 429, count: 1, retryAfterS: 1, paths: 'all' } });
  const started = Date.now();
  const pcap = await fetchArtefact({ config, store, redis, data: data('pcap') });
  assert.ok(Date.now() - started >= 1000, 'Retry-After was waited');
  assert.equal(pcap.size, 40_000);

  fake.setFaults({ burst: { status: 503, count: 1, paths: 'all' }, truncateArtefact: { times: 1, atFraction: 0.3 } });
  const evtx = await fetchArtefact({ config, store, redis, data: data('evtx') });
  assert.equal(evtx.sha256, sha256(f.artefacts?.[id]?.evtx as Buffer));
  assert.deepEqual(filesUnder(blobs), ['evtx', 'pcap'].map((k) => blobPath(blobs, id, k as ArtefactKind).slice(blobs.length + 1)).sort());
  // pcap: 429 then 302; evtx: 503, 302 (cut), 302
  assert.deepEqual(fake.operations(), { 'GET /file_behaviours/{id}/pcap': 2, 'GET /file_behaviours/{id}/evtx': 3 });
  const spent = (run: string): Promise<number> =>
    new RunBudget(redis, RunBudget.keyOf(config.queuePrefix, run), Number.POSITIVE_INFINITY).spent();
  account.summary(await spent('inline-pcap')).summary(await spent('inline-evtx'));
});

test("two analyses of one file by one sandbox keep their own artefacts; an empty answer is asked again and never kept; a web page is no capture; a killed download's leftovers go", async () => {
  const f = fileWith('fetch-art-private', { pcap: 5_000, evtx: 3_000 });
  const first = f.behaviours[0] as Record<string, unknown>;
  const id = String(first.id);
  // the same sandbox's private analysis of the same file: its id carries a timestamp
  const privateId = `${id}-1793400000`;
  f.behaviours.push({ ...structuredClone(first), id: privateId });
  (f.artefacts as Record<string, Partial<Record<ArtefactKind, Buffer>>>)[privateId] = {
    pcap: randomBytes(7_000),
    evtx: randomBytes(2_000),
  };
  const fake = await startFakeGti({ apiKey: KEY, files: [f] });
  cleanup(() => fake.close());
  const dir = tempDir();
  const blobs = join(dir, 'blobs');
  const config = await testConfig(dir, {
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', backoffMs: 20, maxRetries: 2 },
    artefacts: { dir: blobs },
  });
  accountApi(fake, config);
  const redis = createRedis(config.redisUrl as string, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const data = (behaviourId: string, kind: ArtefactKind) =>
    ({ behaviourId, sha256: f.sha256, sandbox: 'VirusTotal Jujubox', kind, source: 'endpoint' }) as const;
  const bytes = (behaviourId: string, kind: ArtefactKind): Buffer => f.artefacts?.[behaviourId]?.[kind] as Buffer;

  const a = await fetchArtefact({ config, store, redis, data: data(id, 'pcap') });
  const b = await fetchArtefact({ config, store, redis, data: data(privateId, 'pcap') });
  assert.notEqual(a.path, b.path);
  assert.deepEqual(
    [sha256(readFileSync(a.path)), sha256(readFileSync(b.path))],
    [sha256(bytes(id, 'pcap')), sha256(bytes(privateId, 'pcap'))],
  );

  // an empty 200, then the file: stored whole
  fake.setFaults({ artefactAnswers: ['empty'] });
  const evtx = await fetchArtefact({ config, store, redis, data: data(id, 'evtx') });
  assert.equal(evtx.size, 3_000);
  // always empty: fails once its tries are spent, and nothing is kept or recorded
  fake.setFaults({ artefactAnswers: ['empty', 'empty', 'empty', 'empty'] });
  await assert.rejects(fetchArtefact({ config, store, redis, data: data(privateId, 'evtx') }), { code: 'GTI_TRANSIENT' });
  // a login page where an event log was expected: a bad answer (asked once more), nothing kept
  fake.setFaults({ artefactAnswers: ['html', 'html'] });
  await assert.rejects(fetchArtefact({ config, store, redis, data: data(privateId, 'evtx') }), { code: 'GTI_BAD_RESPONSE' });
  assert.deepEqual(
    (await store.artefacts.list(privateId)).map((r) => r.kind),
    ['pcap'],
  );
  assert.equal(filesUnder(blobs).filter((p) => p.includes('-1793400000') && p.includes('evtx')).length, 0);

  // what a download killed an hour ago left is removed at the next download there; one under way is not
  const stale = `${b.path.replace('pcap.pcap', 'evtx.evtx')}.part-0123456789ab`;
  const fresh = `${b.path.replace('pcap.pcap', 'evtx.evtx')}.part-ba9876543210`;
  writeFileSync(stale, 'x');
  writeFileSync(fresh, 'y');
  utimesSync(stale, new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));
  fake.setFaults({ artefactAnswers: [] });
  await fetchArtefact({ config, store, redis, data: data(privateId, 'evtx') });
  assert.deepEqual([existsSync(stale), existsSync(fresh)], [false, true]);

  // a file of no bytes an earlier version recorded is no artefact: downloaded again
  await store.artefacts.record({ ...(await store.artefacts.list(id)).find((r) => r.kind === 'evtx')!, size: 0 });
  writeFileSync(evtx.path, '');
  const again = await fetchArtefact({ config, store, redis, data: data(id, 'evtx') });
  assert.deepEqual([again.skipped, again.size], [false, 3_000]);
});
