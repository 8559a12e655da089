import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import type { RedisClient as Redis } from '../../src/queue/index.js';
import { test } from 'vitest';
import { ARTEFACT_QUEUE, blobPath, fetchArtefact, streamToBlob, type ArtefactKind } from '../../src/artefacts/index.js';
import { lookupExitCode, runBackfillCommand, runLookupCommand } from '../../src/cli/index.js';
import type { LookupSummary } from '../../src/lookup/index.js';
import type { ConfigInput } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { createRedis } from '../../src/queue/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { openStore, type ArtefactRecord } from '../../src/store/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { smallFilesystem } from '../support/smallFilesystem.js';
import { makeFakeFile, startFakeGti, type FakeFile } from '../support/fakeGti.js';

const KEY = 'artefact-key-5b0e';
const HAS: Record<ArtefactKind, string> = { pcap: 'has_pcap', evtx: 'has_evtx', memdump: 'has_memdump', html: 'has_html_report' };

type Operations = Record<string, { calls: number; units: Record<string, number> }>;

async function setup(files: FakeFile[], over: ConfigInput = {}) {
  const dir = tempDir();
  const blobs = join(dir, 'blobs');
  const fake = await startFakeGti({ apiKey: KEY, files });
  cleanup(() => fake.close());
  const config = await testConfig(dir, {
    ...over,
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'analyst', group: 'soc', backoffMs: 20, maxRetries: 4, ...over.gti },
    lookup: { backoffMs: 50, ...over.lookup },
    artefacts: { dir: blobs, backoffMs: 50, ...over.artefacts },
  });
  const ctx = { config, log: createLogger('silent') };
  const account = accountApi(fake, config);
  const redis = createRedis(config.redisUrl as string, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const ledger = new QuotaLedger(redis, config.queuePrefix);
  const operations = async (): Promise<Operations> =>
    ((await ledger.usage({ period: 'day', user: 'analyst' }))[0]?.operations as Operations | undefined) ?? {};
  /** The store's artefact records of a behaviour (the store opened and closed around the read). */
  const records = async (behaviourId: string): Promise<ArtefactRecord[]> => {
    const store = openStore(config.store, config);
    try {
      return (await store.artefacts.list(behaviourId)).sort((a, b) => a.kind.localeCompare(b.kind));
    } finally {
      await store.close();
    }
  };
  return { dir, blobs, fake, config, ctx, redis, operations, records, account };
}

/**
 * Sets which artefacts each behaviour of `file` has (its `has_*` flags and the bytes the fake
 * serves): `plan[i]` maps kind → size for behaviour i; kinds not named are absent.
 */
function planArtefacts(file: FakeFile, plan: Partial<Record<ArtefactKind, number>>[]): FakeFile {
  file.artefacts = {};
  file.behaviours.forEach((b, i) => {
    const attrs = b.attributes as Record<string, unknown>;
    const kinds = plan[i] ?? {};
    for (const [kind, flag] of Object.entries(HAS) as [ArtefactKind, string][]) attrs[flag] = kinds[kind] !== undefined;
    const id = String(b.id);
    const bytes: Partial<Record<ArtefactKind, Buffer>> = {};
    for (const [kind, size] of Object.entries(kinds) as [ArtefactKind, number][]) bytes[kind] = randomBytes(size);
    if (Object.keys(bytes).length) (file.artefacts as NonNullable<FakeFile['artefacts']>)[id] = bytes;
  });
  return file;
}

const idOf = (f: FakeFile, i: number): string => String(f.behaviours[i]?.id);
const sandboxOf = (f: FakeFile, i: number): string => String((f.behaviours[i]?.attributes as { sandbox_name: string }).sandbox_name);
const bytesOf = (f: FakeFile, i: number, kind: ArtefactKind): Buffer => f.artefacts?.[idOf(f, i)]?.[kind] as Buffer;
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

/** Asserts the artefact is on disk where blobPath puts it, byte for byte, and recorded with that size and hash. */
function assertStored(
  s: { blobs: string },
  f: FakeFile,
  i: number,
  kind: ArtefactKind,
  recs: ArtefactRecord[],
  source: ArtefactRecord['source'],
): void {
  const want = bytesOf(f, i, kind);
  const path = blobPath(s.blobs, idOf(f, i), kind);
  assert.ok(path.startsWith(join(s.blobs, f.sha256.slice(0, 2), f.sha256)), path);
  assert.equal(statSync(path).size, want.length, `${kind} of behaviour ${i}: size`);
  assert.equal(sha256(readFileSync(path)), sha256(want), `${kind} of behaviour ${i}: content`);
  const rec = recs.find((r) => r.kind === kind);
  assert.ok(rec, `${kind} of behaviour ${i} recorded`);
  assert.deepEqual(
    { behaviourId: rec.behaviourId, path: rec.path, size: rec.size, sha256: rec.sha256, source: rec.source },
    { behaviourId: idOf(f, i), path, size: want.length, sha256: sha256(want), source },
  );
  assert.ok(rec.fetchedAt > Date.now() - 10 * 60_000 && rec.fetchedAt <= Date.now());
}

/** The failed artefact jobs with their reasons. */
async function failedJobs(s: { config: { queuePrefix: string }; redis: Redis }): Promise<{ kind: string; id: string; reason: string }[]> {
  const q = new Queue(ARTEFACT_QUEUE, { connection: s.redis, prefix: s.config.queuePrefix });
  try {
    return (await q.getFailed()).map((j) => ({ kind: j.data.kind as string, id: j.data.behaviourId as string, reason: j.failedReason }));
  } finally {
    await q.close();
  }
}

test("lookup --artefacts pcap,evtx downloads each report's artefacts through the endpoint into the blob directory, 1 unit each; a refresh downloads nothing again", async () => {
  const f = planArtefacts(makeFakeFile('art-lookup', { behaviours: 3, artefactBytes: 5000 }), [
    { pcap: 5000, evtx: 5000, memdump: 5000, html: 5000 },
    { pcap: 5000, html: 5000 },
    {},
  ]);
  const s = await setup([f]);
  const summary = await runLookupCommand([f.sha256], { artefacts: 'pcap,evtx' }, s.ctx);
  assert.deepEqual(summary?.counts, { ok: 1 });
  assert.deepEqual(summary?.artefacts, { completed: 3, failed: 0, open: 0 });
  // one page of reports and three artefact endpoints (rule 1)
  assert.equal(summary?.api_units, 4);
  s.account.summary(summary?.api_units);

  const first = await s.records(idOf(f, 0));
  assert.deepEqual(
    first.map((r) => r.kind),
    ['evtx', 'pcap'],
  );
  assertStored(s, f, 0, 'pcap', first, 'endpoint');
  assertStored(s, f, 0, 'evtx', first, 'endpoint');
  const second = await s.records(idOf(f, 1));
  assert.deepEqual(
    second.map((r) => r.kind),
    ['pcap'],
  );
  assertStored(s, f, 1, 'pcap', second, 'endpoint');
  assert.deepEqual(await s.records(idOf(f, 2)), []);
  const rel = (i: number, kind: ArtefactKind): string => blobPath(s.blobs, idOf(f, i), kind).slice(s.blobs.length + 1);
  assert.deepEqual(filesUnder(s.blobs), [rel(0, 'evtx'), rel(0, 'pcap'), rel(1, 'pcap')].sort(), 'nothing else, no .part file');

  // the endpoint carried the key, the storage host did not; memdump and html were not asked for
  const endpoint = s.fake.requests.filter((r) => r.path.startsWith('/api/v3/file_behaviours/'));
  assert.deepEqual(endpoint.map((r) => `${r.path.split('/').pop()} ${r.status} ${r.hadKey}`).sort(), [
    'evtx 302 true',
    'pcap 302 true',
    'pcap 302 true',
  ]);
  const downloads = s.fake.requests.filter((r) => r.path.startsWith('/download/artefact/'));
  assert.equal(downloads.length, 3);
  assert.ok(downloads.every((r) => !r.hadKey && r.status === 200));
  assert.deepEqual(await s.operations(), {
    // the budget guard reads the day's allowance first (rule 2: free)
    'GET /users/{id}/overall_quotas': { calls: 1, units: {} },
    'GET /files/{id}/behaviours': { calls: 1, units: { api_requests: 1 } },
    'GET /file_behaviours/{id}/pcap': { calls: 2, units: { api_requests: 2 } },
    'GET /file_behaviours/{id}/evtx': { calls: 1, units: { api_requests: 1 } },
  });

  // again with --refresh: the reports are fetched again, the artefacts are not
  const before = s.fake.requests.length;
  const again = await runLookupCommand([f.sha256], { artefacts: 'pcap,evtx', refresh: true }, s.ctx);
  assert.deepEqual(again?.counts, { ok: 1 });
  assert.deepEqual(again?.artefacts, { completed: 3, failed: 0, open: 0 });
  assert.equal(again?.api_units, 1);
  s.account.summary(again?.api_units);
  assert.deepEqual(
    s.fake.requests.slice(before).map((r) => r.path),
    ['/api/v3/users/analyst/overall_quotas', `/api/v3/files/${f.sha256}/behaviours`],
  );
  assert.deepEqual((await s.operations())['GET /file_behaviours/{id}/pcap'], { calls: 2, units: { api_requests: 2 } });
  assert.deepEqual(await s.records(idOf(f, 0)), first, 'records untouched');
});

test('fetchArtefact skips a recorded artefact whose file is there, and downloads it again when the file is gone', async () => {
  const f = planArtefacts(makeFakeFile('art-fetch', { behaviours: 1 }), [{ evtx: 7000 }]);
  const s = await setup([f]);
  await runLookupCommand([f.sha256], { artefacts: 'evtx' }, s.ctx);
  const [rec] = await s.records(idOf(f, 0));
  assert.ok(rec);
  const store = openStore(s.config.store, s.config);
  cleanup(() => store.close());
  const data = {
    behaviourId: idOf(f, 0),
    sha256: f.sha256,
    sandbox: sandboxOf(f, 0),
    kind: 'evtx' as const,
    source: 'endpoint' as const,
    lastModified: rec.lastModified,
  };
  const before = s.fake.requests.length;
  assert.deepEqual(await fetchArtefact({ config: s.config, store, redis: s.redis, data }), {
    path: rec.path,
    size: 7000,
    sha256: sha256(bytesOf(f, 0, 'evtx')),
    skipped: true,
  });
  assert.equal(s.fake.requests.length, before, 'nothing requested');

  rmSync(rec.path);
  const r = await fetchArtefact({ config: s.config, store, redis: s.redis, data });
  assert.deepEqual(r, { path: rec.path, size: 7000, sha256: sha256(bytesOf(f, 0, 'evtx')), skipped: false });
  assert.equal(sha256(readFileSync(rec.path)), sha256(bytesOf(f, 0, 'evtx')));
  assert.deepEqual(
    s.fake.requests.slice(before).map((q) => [q.path.split('/')[1], q.status]),
    [
      ['api', 302],
      ['download', 200],
    ],
  );
  const [after] = await s.records(idOf(f, 0));
  assert.ok((after?.fetchedAt as number) >= rec.fetchedAt);

  // the record names the report version its file belongs to: a newer version's job downloads
  // again, a late job of an older version (or the same one) keeps the file
  const version = rec.lastModified as number;
  assert.equal(typeof version, 'number');
  const asked = s.fake.requests.length;
  for (const lastModified of [version, version - 100]) {
    assert.equal((await fetchArtefact({ config: s.config, store, redis: s.redis, data: { ...data, lastModified } })).skipped, true);
  }
  assert.equal(s.fake.requests.length, asked, 'nothing requested for the same or an older version');
  const newer = await fetchArtefact({ config: s.config, store, redis: s.redis, data: { ...data, lastModified: version + 60 } });
  assert.equal(newer.skipped, false);
  assert.equal((await s.records(idOf(f, 0)))[0]?.lastModified, version + 60);
});

test('a truncated artefact download is retried from the start; the file ends complete and no .part file is left', async () => {
  const f = planArtefacts(makeFakeFile('art-trunc', { behaviours: 1 }), [{ pcap: 300_000 }]);
  const s = await setup([f]);
  s.fake.setFaults({ truncateArtefact: { times: 1 } });
  const summary = await runLookupCommand([f.sha256], { artefacts: 'pcap' }, s.ctx);
  assert.deepEqual(summary?.artefacts, { completed: 1, failed: 0, open: 0 });
  assert.deepEqual(s.fake.faults.truncateArtefact, { times: 0 }, 'the fault was used');
  const recs = await s.records(idOf(f, 0));
  assertStored(s, f, 0, 'pcap', recs, 'endpoint');
  assert.deepEqual(filesUnder(s.blobs), [blobPath(s.blobs, idOf(f, 0), 'pcap').slice(s.blobs.length + 1)]);
  // two downloads (the first cut), two endpoint calls on the ledger
  assert.equal(s.fake.countFor('/download/artefact/'), 2);
  assert.equal(s.fake.countFor(`/api/v3/file_behaviours/`, 302), 2);
  assert.deepEqual((await s.operations())['GET /file_behaviours/{id}/pcap'], { calls: 2, units: { api_requests: 2 } });
  assert.equal(summary?.api_units, 3);
  s.account.summary(summary?.api_units);
  assert.deepEqual(await failedJobs(s), []);
});

test('--artefact-max-bytes: a bigger artefact is refused (ARTEFACT_TOO_LARGE) and leaves nothing; smaller kinds are stored', async () => {
  const f = planArtefacts(makeFakeFile('art-cap', { behaviours: 1 }), [{ pcap: 5000, evtx: 1000, html: 1001 }]);
  const s = await setup([f]);
  const summary = await runLookupCommand([f.sha256], { artefacts: 'pcap,evtx,html', artefactMaxBytes: '1000' }, s.ctx);
  assert.deepEqual(summary?.counts, { ok: 1 });
  s.account.summary(summary?.api_units);
  assert.deepEqual(summary?.artefacts, { completed: 1, failed: 2, open: 0 });
  // the reports are stored, but artefacts asked for were not had: the command fails, as fetch does
  assert.equal(lookupExitCode(summary as LookupSummary), 1);
  const recs = await s.records(idOf(f, 0));
  assert.deepEqual(
    recs.map((r) => r.kind),
    ['evtx'],
  );
  assertStored(s, f, 0, 'evtx', recs, 'endpoint');
  assert.deepEqual(filesUnder(s.blobs), [blobPath(s.blobs, idOf(f, 0), 'evtx').slice(s.blobs.length + 1)], 'no file, no .part');
  const failed = (await failedJobs(s)).sort((a, b) => a.kind.localeCompare(b.kind));
  assert.deepEqual(
    failed.map((j) => [j.kind, j.id]),
    [
      ['html', idOf(f, 0)],
      ['pcap', idOf(f, 0)],
    ],
  );
  for (const j of failed) assert.match(j.reason, /^ARTEFACT_TOO_LARGE: .*over the 1000-byte cap/);
  // refused at once (not retried): one call each, each a unit
  assert.equal(s.fake.countFor(`/api/v3/file_behaviours/`), 3);
  assert.deepEqual(await s.operations(), {
    'GET /users/{id}/overall_quotas': { calls: 1, units: {} },
    'GET /files/{id}/behaviours': { calls: 1, units: { api_requests: 1 } },
    'GET /file_behaviours/{id}/pcap': { calls: 1, units: { api_requests: 1 } },
    'GET /file_behaviours/{id}/evtx': { calls: 1, units: { api_requests: 1 } },
    'GET /file_behaviours/{id}/html': { calls: 1, units: { api_requests: 1 } },
  });

  // the same lookup again with room: the failed downloads are tried anew, the stored one is kept,
  // and the counts are this run's own
  const again = await runLookupCommand([f.sha256], { artefacts: 'pcap,evtx,html', refresh: true }, s.ctx);
  s.account.summary(again?.api_units);
  assert.deepEqual(again?.artefacts, { completed: 3, failed: 0, open: 0 });
  assert.equal(lookupExitCode(again as LookupSummary), 0);
  assert.deepEqual(
    (await s.records(idOf(f, 0))).map((r) => r.kind),
    ['evtx', 'html', 'pcap'],
  );
  // and a run that asks for nothing new counts nothing of the earlier runs
  const quiet = await runLookupCommand([f.sha256], { artefacts: 'pcap,evtx,html' }, s.ctx);
  s.account.summary(quiet?.api_units);
  assert.deepEqual(quiet?.artefacts, { completed: 0, failed: 0, open: 0 });
  assert.equal(lookupExitCode(quiet as LookupSummary), 0);
});

test('streamToBlob: a body over the cap while streaming (no size advertised), or cut, leaves nothing behind; a good one is hashed as written', async () => {
  const dir = tempDir();
  const path = join(dir, 'aa', 'x', 'pcap.pcap');
  const parts = [randomBytes(400), randomBytes(400), randomBytes(400)];
  async function* body(cut?: Error): AsyncGenerator<Buffer> {
    for (const p of parts) yield p;
    if (cut) throw cut;
  }
  await assert.rejects(streamToBlob(body(), null, path, 1000, 'pcap of x'), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ARTEFACT_TOO_LARGE');
    assert.match(err.message, /^pcap of x passed the 1000-byte cap/);
    return true;
  });
  assert.deepEqual(readdirSync(join(dir, 'aa', 'x')), []);
  // an advertised size over the cap is refused before anything is written
  await assert.rejects(streamToBlob(body(), 5000, path, 1000, 'pcap of x'), { code: 'ARTEFACT_TOO_LARGE' });
  const cut = Object.assign(new Error('truncated'), { code: 'GTI_NETWORK' });
  await assert.rejects(streamToBlob(body(cut), 1500, path, 10_000, 'pcap of x'), (err) => err === cut);
  assert.deepEqual(readdirSync(join(dir, 'aa', 'x')), []);

  const whole = Buffer.concat(parts);
  assert.deepEqual(await streamToBlob(body(), null, path, 1200, 'pcap of x'), { path, size: 1200, sha256: sha256(whole) });
  assert.ok(readFileSync(path).equals(whole));
  assert.deepEqual(readdirSync(join(dir, 'aa', 'x')), ['pcap.pcap']);
  // a second download of the same artefact replaces the file
  parts.reverse();
  const r = await streamToBlob(body(), 1200, path, 1200, 'pcap of x');
  assert.equal(r.sha256, sha256(Buffer.concat(parts)));
  assert.ok(readFileSync(path).equals(Buffer.concat(parts)));
});

const small = smallFilesystem(tempDir(), 1);
test.skipIf(typeof small === 'string')(
  `streamToBlob on a full disk: STORE_FULL naming the artefact directory, nothing left behind, no stray rejection${typeof small === 'string' ? ` [skipped: ${small}]` : ''}`,
  async () => {
    const fs = small as Exclude<typeof small, string>;
    const path = join(fs.path, 'ab', 'x', 'pcap.pcap');
    async function* body(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 48; i++) yield randomBytes(64 * 1024);
    }
    await assert.rejects(streamToBlob(body(), null, path, 10 * 1024 ** 2, 'pcap of x'), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'STORE_FULL');
      assert.match(err.message, new RegExp(`^the artefact directory ${join(fs.path, 'ab', 'x')} is full \\(ENOSPC\\)`));
      return true;
    });
    assert.deepEqual(readdirSync(join(fs.path, 'ab', 'x')), [], 'no partial file');
    // with room again the same download completes
    fs.resize(8);
    assert.equal((await streamToBlob(body(), null, path, 10 * 1024 ** 2, 'pcap of x')).size, 48 * 64 * 1024);
  },
);

test('--artefact-filter: only the reports matching it get their artefacts downloaded', async () => {
  const f = planArtefacts(makeFakeFile('art-filter', { sandboxes: ['CAPE Sandbox', 'Zenbox', 'VirusTotal Jujubox'] }), [
    { pcap: 2000 },
    { pcap: 2000 },
    { pcap: 2000 },
  ]);
  const g = planArtefacts(makeFakeFile('art-filter-verdict', { sandboxes: ['CAPE Sandbox', 'Zenbox', 'VirusTotal Jujubox'] }), [
    { pcap: 2000 },
    { pcap: 2000 },
    { pcap: 2000 },
  ]);
  const verdicts: (string[] | undefined)[] = [['CLEAN'], ['UNKNOWN', 'TROJAN'], undefined];
  g.behaviours.forEach((b, i) => {
    const attrs = b.attributes as Record<string, unknown>;
    if (verdicts[i]) attrs.verdicts = verdicts[i];
    else delete attrs.verdicts;
  });
  const s = await setup([f, g]);
  assert.equal(sandboxOf(f, 1), 'Zenbox');

  const bySandbox = await runLookupCommand([f.sha256], { artefacts: 'pcap', artefactFilter: 'sandbox=zenbox' }, s.ctx);
  s.account.summary(bySandbox?.api_units);
  assert.deepEqual(bySandbox?.artefacts, { completed: 1, failed: 0, open: 0 });
  assert.deepEqual(await s.records(idOf(f, 0)), []);
  assertStored(s, f, 1, 'pcap', await s.records(idOf(f, 1)), 'endpoint');
  assert.deepEqual(await s.records(idOf(f, 2)), []);

  const byVerdict = await runLookupCommand([g.sha256], { artefacts: 'pcap', artefactFilter: 'verdict=malicious' }, s.ctx);
  s.account.summary(byVerdict?.api_units);
  // counted for this run only, not with the earlier run's job the queue keeps
  assert.deepEqual(byVerdict?.artefacts, { completed: 1, failed: 0, open: 0 });
  assert.deepEqual(await s.records(idOf(g, 0)), [], 'CLEAN is not malicious');
  assertStored(s, g, 1, 'pcap', await s.records(idOf(g, 1)), 'endpoint');
  assert.deepEqual(await s.records(idOf(g, 2)), [], 'no verdict is not malicious');

  const asked = s.fake.requests.filter((r) => r.path.startsWith('/api/v3/file_behaviours/')).map((r) => decodeURIComponent(r.path));
  assert.deepEqual(asked.sort(), [`/api/v3/file_behaviours/${idOf(f, 1)}/pcap`, `/api/v3/file_behaviours/${idOf(g, 1)}/pcap`].sort());
  assert.equal(filesUnder(s.blobs).length, 2);
});

test("backfill from a directory downloads through the feed lines' links: the key only under the API base, 0 API units (rule 3)", async () => {
  const f = planArtefacts(makeFakeFile('art-feed', { behaviours: 3 }), [{ pcap: 4000, html: 3000 }, { pcap: 2500, html: 6000 }, {}]);
  const s = await setup([f]);
  const [a, b] = [idOf(f, 0), idOf(f, 1)];
  const pcapLink = s.fake.feedLink(a, 'pcap');
  const htmlLink = s.fake.feedLink(b, 'html', { foreignHost: true });
  // each line carries only some of its links: a report without a link for a kind gets no download of it
  const context: Record<string, unknown>[] = [{ pcap: pcapLink }, { html_report: htmlLink }, {}];
  const feedDir = join(s.dir, 'feed');
  mkdirSync(feedDir);
  writeFileSync(
    join(feedDir, '202611050000.jsonl'),
    f.behaviours.map((beh, i) => JSON.stringify({ ...beh, context_attributes: { file_type_tag: 'peexe', ...context[i] } })).join('\n') +
      '\n',
  );

  const run = await runBackfillCommand({ source: `dir:${feedDir}`, artefacts: { kinds: ['pcap', 'html'] } }, s.ctx);
  assert.deepEqual(run.minutes, ['202611050000']);
  assert.deepEqual(run.summary.batches, { ok: 1, empty: 0, missing: 0, failed: 0, pending: 0 });
  assert.deepEqual(run.summary.records, { indexed: 3, rejected: 0 });
  assert.equal(run.summary.api_units, 0);
  s.account.summary(run.summary.api_units);
  assert.deepEqual(run.summary.artefacts, { completed: 2, failed: 0, open: 0 });

  const ra = await s.records(a);
  assert.deepEqual(
    ra.map((r) => r.kind),
    ['pcap'],
  );
  assertStored(s, f, 0, 'pcap', ra, 'feed_link');
  const rb = await s.records(b);
  assert.deepEqual(
    rb.map((r) => r.kind),
    ['html'],
  );
  assertStored(s, f, 1, 'html', rb, 'feed_link');
  assert.equal(filesUnder(s.blobs).length, 2);

  // the feed link under /api/v3 carried the key; its redirect and the foreign link did not
  const pcapPath = new URL(pcapLink).pathname;
  const seen = s.fake.requests.map((r) => ({ path: r.path, query: r.query, hadKey: r.hadKey, status: r.status }));
  assert.equal(seen.length, 3);
  assert.deepEqual(
    seen.find((r) => r.path === pcapPath),
    { path: pcapPath, query: '', hadKey: true, status: 302 },
  );
  const foreign = new URL(htmlLink);
  assert.deepEqual(
    seen.find((r) => r.path === foreign.pathname),
    { path: foreign.pathname, query: foreign.search.slice(1), hadKey: false, status: 200 },
  );
  const redirected = seen.filter((r) => r.path === `/download/artefact/${encodeURIComponent(a)}/pcap`);
  assert.deepEqual(
    redirected.map((r) => [r.hadKey, r.status]),
    [[false, 200]],
  );
  assert.ok(!s.fake.requests.some((r) => r.path.startsWith('/api/v3/file_behaviours/')), 'no endpoint call');

  // the ledger has both feed-link downloads at 0 units (rule 3), one label per kind (not per token);
  // the one on another host is named after the feed route, its link never being an API path
  assert.deepEqual(await s.operations(), {
    'GET /feeds/file_behaviours/{token}/pcap': { calls: 1, units: {} },
    'GET /feeds/file_behaviours/{token}/html': { calls: 1, units: {} },
  });
});
