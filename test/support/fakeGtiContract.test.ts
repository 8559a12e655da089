import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'vitest';
import { cleanup } from './env.js';
import { makeFakeFile, startFakeGti, type FakeFile, type FakeGti, type FakeGtiOptions } from './fakeGti.js';

const KEY = 'fake-gti-contract-key-91c2';
const XTOOL = 'acme.sandtrail.0.1';
const key = { 'x-apikey': KEY };
const withTool = { ...key, 'x-tool': XTOOL };
const ART = 4096;

// A: 5 behaviours (3 pages of 2), private report, artefacts. B: no behaviours. C: no private report, no artefact bytes.
const A = makeFakeFile('contract-a', { behaviours: 5, withPrivate: true, artefactBytes: ART });
const B = makeFakeFile('contract-b', { behaviours: 0 });
const C = makeFakeFile('contract-c');
const UNKNOWN = 'f'.repeat(64);

async function fake(over: Partial<FakeGtiOptions> = {}): Promise<FakeGti> {
  const f = await startFakeGti({ apiKey: KEY, files: [A, B, C], unmetered: 'tests of the fake itself: raw HTTP, no ledger', ...over });
  cleanup(() => f.close());
  return f;
}

type Json = Record<string, unknown> & {
  data: Record<string, unknown> & Record<string, unknown>[];
  meta?: { count: number; cursor?: string };
  links: { self: string; next?: string; related?: string };
};

async function getJson(url: string, headers: Record<string, string> = key): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, { headers, redirect: 'manual' });
  return { status: res.status, body: (await res.json()) as Json };
}

async function errorOf(url: string, headers: Record<string, string> = key): Promise<{ status: number; code: unknown }> {
  const { status, body } = await getJson(url, headers);
  return { status, code: (body.error as { code?: unknown } | undefined)?.code };
}

/** Reads a body that may be cut: the bytes received and whether reading failed. */
async function readAll(res: Response): Promise<{ bytes: Buffer; failed: boolean }> {
  const parts: Uint8Array[] = [];
  try {
    for await (const chunk of res.body!) parts.push(chunk as Uint8Array);
    return { bytes: Buffer.concat(parts), failed: false };
  } catch {
    return { bytes: Buffer.concat(parts), failed: true };
  }
}

const behavioursUrl = (f: FakeGti, id: string, query = ''): string => `${f.baseUrl}/files/${id}/behaviours${query}`;
const behaviourUrl = (f: FakeGti, id: string, rest = ''): string => `${f.baseUrl}/file_behaviours/${encodeURIComponent(id)}${rest}`;
const idsOf = (file: FakeFile): string[] => file.behaviours.map((b) => b.id as string);
const first = (file: FakeFile): string => idsOf(file)[0]!;

test('makeFakeFile: deterministic, hashes of the seed, API-shaped behaviours, full private report, artefacts', () => {
  assert.deepEqual(makeFakeFile('contract-a', { behaviours: 5, withPrivate: true, artefactBytes: ART }), A);
  assert.equal(A.sha256, createHash('sha256').update('contract-a').digest('hex'));
  assert.equal(A.md5, createHash('md5').update('contract-a').digest('hex'));
  assert.equal(A.sha1, createHash('sha1').update('contract-a').digest('hex'));
  assert.equal(A.behaviours.length, 5);
  assert.equal(new Set(idsOf(A)).size, 5);
  assert.equal(first(A), `${A.sha256}_VirusTotal Jujubox`);
  for (const b of A.behaviours) {
    assert.deepEqual(Object.keys(b).sort(), ['attributes', 'id', 'links', 'type']);
    assert.equal(b.type, 'file_behaviour');
    assert.ok((b.id as string).startsWith(`${A.sha256}_`));
  }
  const attrs = A.behaviours[0]!.attributes as Record<string, unknown>;
  for (const k of ['has_pcap', 'has_evtx', 'has_memdump', 'has_html_report']) assert.equal(attrs[k], true, k);
  const arts = A.artefacts?.[first(A)];
  assert.deepEqual(Object.keys(arts ?? {}).sort(), ['evtx', 'html', 'memdump', 'pcap']);
  assert.equal(arts?.pcap?.length, ART);
  assert.equal(arts?.pcap?.readUInt32LE(0), 0xa1b2c3d4, 'a pcap starts with its magic');
  const p = A.private!;
  for (const k of ['sha256', 'sha1', 'md5', 'size', 'magic', 'tags', 'exiftool', 'trid', 'vhash', 'ssdeep']) assert.ok(k in p, k);
  assert.equal(Object.keys(p).length, 11, 'one field beyond the spec table');
  const exif = p.exiftool as Record<string, unknown>;
  for (const k of ['MIMEType', 'FileType', 'FileTypeExtension']) assert.equal(typeof exif[k], 'string', k);
  assert.ok(Object.values(exif).every((v) => typeof v === 'string'));
  for (const t of p.trid as { file_type: unknown; probability: unknown }[]) {
    assert.equal(typeof t.file_type, 'string');
    assert.equal(typeof t.probability, 'number');
  }
  assert.deepEqual((A.gtiAssessment?.verdict as { value: string }).value, 'VERDICT_MALICIOUS');
  assert.equal(C.private, undefined);
  assert.equal(C.artefacts, undefined);
  assert.deepEqual(B.behaviours, []);
});

test('auth on the file routes: 401 without or with a wrong key; the query is recorded', async () => {
  const f = await fake();
  assert.deepEqual(await errorOf(behavioursUrl(f, A.sha256), {}), { status: 401, code: 'AuthenticationRequiredError' });
  assert.deepEqual(await errorOf(behaviourUrl(f, first(A)), { 'x-apikey': 'nope' }), { status: 401, code: 'WrongCredentialsError' });
  assert.deepEqual(await errorOf(`${f.baseUrl}/private/files/${A.sha256}`, {}), { status: 401, code: 'AuthenticationRequiredError' });
  await fetch(behavioursUrl(f, A.sha256, '?limit=3'), { headers: key });
  assert.deepEqual(
    f.requests.map((r) => [r.query, r.hadKey, r.status]),
    [
      ['', false, 401],
      ['', true, 401],
      ['', false, 401],
      ['limit=3', true, 200],
    ],
  );
});

test('/files/{id}/behaviours pages with limit and an opaque cursor; links.next is followed verbatim', async () => {
  const f = await fake();
  const pages: Json[] = [];
  let url: string | undefined = behavioursUrl(f, A.sha256, '?limit=2');
  while (url) {
    const { status, body } = await getJson(url);
    assert.equal(status, 200);
    assert.equal(body.links.self, url);
    pages.push(body);
    url = body.links.next;
  }
  assert.equal(pages.length, 3);
  assert.deepEqual(
    pages.map((p) => [p.data.length, p.meta?.count, typeof p.meta?.cursor]),
    [
      [2, 5, 'string'],
      [2, 5, 'string'],
      [1, 5, 'undefined'],
    ],
  );
  const served = pages.flatMap((p) => p.data);
  assert.deepEqual(
    served.map((b) => b.id),
    idsOf(A),
  );
  for (const b of served) {
    assert.equal(b.type, 'file_behaviour');
    assert.ok(!('context_attributes' in b));
    assert.equal((b.links as { self: string }).self, `${f.baseUrl}/file_behaviours/${encodeURIComponent(b.id as string)}`);
  }
  assert.ok(pages[0]!.links.next!.startsWith(`${f.baseUrl}/files/${A.sha256}/behaviours?`));
  assert.ok(!pages[0]!.meta!.cursor!.includes('2'), 'the cursor is not the bare offset');

  // default limit 10: one page holding all 5
  const all = await getJson(behavioursUrl(f, A.sha256));
  assert.deepEqual(all.body.meta, { count: 5 });
  assert.equal(all.body.links.next, undefined);
  // md5 and sha1, upper case, name the same file
  for (const h of [A.md5.toUpperCase(), A.sha1.toUpperCase()])
    assert.deepEqual((await getJson(behavioursUrl(f, h))).body.data, all.body.data, h);
  // a known file without behaviours; an unknown one
  const empty = await getJson(behavioursUrl(f, B.sha256));
  assert.deepEqual(empty, { status: 200, body: { data: [], meta: { count: 0 }, links: { self: behavioursUrl(f, B.sha256) } } });
  assert.deepEqual(await errorOf(behavioursUrl(f, UNKNOWN)), { status: 404, code: 'NotFoundError' });
  // bad limits and cursors
  for (const q of ['?limit=41', '?limit=0', '?limit=abc', '?limit=-1', '?cursor=bogus', '?cursor=MTA'])
    assert.deepEqual(await errorOf(behavioursUrl(f, A.sha256, q)), { status: 400, code: 'InvalidArgumentError' }, q);
  assert.equal((await getJson(behavioursUrl(f, A.sha256, '?limit=40'))).status, 200);
});

test('/file_behaviours/{id}: one behaviour, ids with a space encoded, relationships, unknown ones 404', async () => {
  const f = await fake();
  const id = first(A);
  assert.ok(id.includes(' '));
  const one = await getJson(behaviourUrl(f, id));
  assert.equal(one.status, 200);
  const listed = (await getJson(behavioursUrl(f, A.sha256))).body.data[0];
  assert.deepEqual(one.body.data, listed);
  assert.ok(f.requests[0]!.path.includes('VirusTotal%20Jujubox'));
  assert.equal((await getJson(behaviourUrl(f, id.replace(A.sha256, A.sha256.toUpperCase())))).body.data.id, id, 'sha part in any case');
  assert.deepEqual(await errorOf(behaviourUrl(f, `${A.sha256}_No Such Sandbox`)), { status: 404, code: 'NotFoundError' });

  const file = await getJson(behaviourUrl(f, id, '/file'));
  assert.equal(file.status, 200);
  assert.equal(file.body.data.type, 'file');
  assert.equal(file.body.data.id, A.sha256);
  const fa = file.body.data.attributes as Record<string, unknown>;
  for (const k of ['sha256', 'sha1', 'md5', 'size', 'type_description', 'names', 'last_analysis_stats']) assert.ok(k in fa, k);
  assert.equal(typeof (fa.last_analysis_stats as Record<string, unknown>).malicious, 'number');
  assert.equal((file.body.data.links as { self: string }).self, `${f.baseUrl}/files/${A.sha256}`);
  // C has no `file` attributes: derived from its hashes
  const cFile = (await getJson(behaviourUrl(f, first(C), '/file'))).body.data;
  assert.equal((cFile.attributes as Record<string, unknown>).md5, C.md5);

  const mitre = ((A.behaviours[0]!.attributes as Record<string, unknown>).mitre_attack_techniques ?? []) as { id: string }[];
  const expected = mitre.length > 0 ? [...new Set(mitre.map((m) => m.id))] : ['T1055', 'T1082'];
  const tech = await getJson(behaviourUrl(f, id, '/attack_techniques'));
  assert.equal(tech.status, 200);
  assert.deepEqual(
    tech.body.data.map((t) => t.id),
    expected,
  );
  assert.equal(tech.body.meta?.count, expected.length);
  for (const t of tech.body.data) {
    assert.equal(t.type, 'attack_technique');
    assert.equal(typeof (t.attributes as Record<string, unknown>).name, 'string');
    assert.equal((t.links as { self: string }).self, `${f.baseUrl}/attack_techniques/${t.id as string}`);
  }
  const paged = await getJson(behaviourUrl(f, id, '/attack_techniques?limit=1'));
  assert.equal(paged.body.data.length, 1);
  assert.equal(typeof paged.body.links.next, expected.length > 1 ? 'string' : 'undefined');
  // a behaviour without mitre_attack_techniques lists the fixed ones
  const bare = structuredClone(C);
  delete (bare.behaviours[0]!.attributes as Record<string, unknown>).mitre_attack_techniques;
  const g = await fake({ files: [bare] });
  assert.deepEqual(
    (await getJson(behaviourUrl(g, first(bare), '/attack_techniques'))).body.data.map((t) => t.id),
    ['T1055', 'T1082'],
  );

  const rel = await getJson(behaviourUrl(f, id, '/relationships/file'));
  assert.deepEqual(rel.body.data, { type: 'file', id: A.sha256 });
  const relT = await getJson(behaviourUrl(f, id, '/relationships/attack_techniques'));
  assert.deepEqual(
    relT.body.data,
    expected.map((t) => ({ type: 'attack_technique', id: t })),
  );
  for (const r of ['/comments', '/relationships/comments', '/file/extra'])
    assert.deepEqual(await errorOf(behaviourUrl(f, id, r)), { status: 404, code: 'NotFoundError' }, r);
});

test('artefacts: 302 to a key-less download of the bytes; 404 when the file has none; forged tokens 403', async () => {
  const f = await fake();
  const id = first(A);
  for (const kind of ['pcap', 'evtx', 'memdump', 'html'] as const) {
    const api = await fetch(behaviourUrl(f, id, `/${kind}`), { headers: key, redirect: 'manual' });
    assert.equal(api.status, 302, kind);
    const location = api.headers.get('location')!;
    assert.ok(location.startsWith(`${f.origin}/download/artefact/`), location);
    assert.ok(!location.startsWith(f.baseUrl));
    const res = await fetch(location);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/octet-stream');
    assert.equal(Number(res.headers.get('content-length')), ART);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(A.artefacts![id]![kind]!), kind);
    assert.deepEqual([f.requests.at(-1)!.hadKey, f.requests.at(-1)!.status], [false, 200]);
    // a client that (wrongly) sends the key there is served too, and it shows
    assert.equal((await fetch(location, { headers: key })).status, 200);
    assert.equal(f.requests.at(-1)!.hadKey, true);
  }
  assert.deepEqual(await errorOf(behaviourUrl(f, first(C), '/pcap')), { status: 404, code: 'NotFoundError' });
  assert.deepEqual(await errorOf(behaviourUrl(f, `${UNKNOWN}_Zenbox`, '/pcap')), { status: 404, code: 'NotFoundError' });
  assert.equal((await fetch(`${f.origin}/download/artefact/${encodeURIComponent(id)}/pcap?token=forged`)).status, 403);
  const api = await fetch(behaviourUrl(f, id, '/pcap'), { headers: key, redirect: 'manual' });
  assert.equal((await fetch(api.headers.get('location')!.replace('/pcap?', '/evtx?'))).status, 403, 'a token opens one artefact');
});

test('feed links: key-holding links 302 to the download; foreign-host links are the key-less download itself', async () => {
  const f = await fake();
  const id = first(A);
  const link = f.feedLink(id, 'pcap');
  assert.match(link, new RegExp(`^${f.baseUrl}/feeds/file_behaviours/[^/]+/pcap$`));
  assert.equal(f.feedLink(id, 'pcap'), link, 'stable per behaviour');
  assert.equal((await fetch(link, { redirect: 'manual' })).status, 401);
  const api = await fetch(link, { headers: key, redirect: 'manual' });
  assert.equal(api.status, 302);
  const res = await fetch(api.headers.get('location')!);
  assert.ok(Buffer.from(await res.arrayBuffer()).equals(A.artefacts![id]!.pcap!));

  const foreign = f.feedLink(id, 'memdump', { foreignHost: true });
  assert.ok(foreign.startsWith(`${f.origin}/download/artefact/`) && !foreign.startsWith(f.baseUrl), foreign);
  const direct = await fetch(foreign);
  assert.equal(direct.status, 200);
  assert.ok(Buffer.from(await direct.arrayBuffer()).equals(A.artefacts![id]!.memdump!));
  const last = f.requests.at(-1)!;
  assert.deepEqual([last.path.startsWith('/download/artefact/'), last.hadKey, last.status], [true, false, 200]);

  assert.deepEqual(await errorOf(f.feedLink(first(C), 'evtx')), { status: 404, code: 'NotFoundError' }, 'no bytes for it');
  assert.deepEqual(await errorOf(`${f.baseUrl}/feeds/file_behaviours/unregistered/pcap`), { status: 404, code: 'NotFoundError' });
  assert.throws(() => f.feedLink(`${UNKNOWN}_Zenbox`, 'pcap'), RangeError);
});

test('/private/files/{sha256}: gti_assessment only with x-tool; md5/sha1 400; unknown 404; no licence 403', async () => {
  const f = await fake();
  const url = `${f.baseUrl}/private/files/${A.sha256}`;
  const plain = await getJson(url);
  assert.equal(plain.status, 200);
  assert.deepEqual(plain.body, {
    data: { type: 'private_file', id: A.sha256, attributes: A.private, links: { self: url } },
  });
  const tooled = await getJson(url, withTool);
  assert.deepEqual(tooled.body.data.attributes, { ...A.private, gti_assessment: A.gtiAssessment });
  assert.equal((await getJson(`${f.baseUrl}/private/files/${A.sha256.toUpperCase()}`)).body.data.id, A.sha256);
  for (const h of [A.md5, A.sha1, 'not-a-hash'])
    assert.deepEqual(await errorOf(`${f.baseUrl}/private/files/${h}`), { status: 400, code: 'InvalidArgumentError' }, h);
  assert.deepEqual(await errorOf(`${f.baseUrl}/private/files/${UNKNOWN}`), { status: 404, code: 'NotFoundError' });
  assert.deepEqual(await errorOf(`${f.baseUrl}/private/files/${C.sha256}`, withTool), { status: 404, code: 'NotFoundError' });

  const unlicensed = await fake({ privateLicence: false });
  const r = await getJson(`${unlicensed.baseUrl}/private/files/${A.sha256}`, withTool);
  assert.equal(r.status, 403);
  assert.equal((r.body.error as { code: string }).code, 'ForbiddenError');
  assert.match((r.body.error as { message: string }).message, /Private Scanning license/);
  assert.equal((await errorOf(`${unlicensed.baseUrl}/private/files/${A.md5}`)).status, 403);
  assert.equal((await getJson(behavioursUrl(unlicensed, A.sha256))).status, 200, 'public routes unaffected');
});

test('faults forbidden / notFoundHashes by any hash form; validated', async () => {
  const f = await fake({ faults: { forbidden: [A.md5.toUpperCase()] } });
  assert.deepEqual(await errorOf(behavioursUrl(f, A.sha256)), { status: 403, code: 'ForbiddenError' });
  assert.deepEqual(await errorOf(behavioursUrl(f, A.sha1)), { status: 403, code: 'ForbiddenError' });
  assert.equal((await getJson(behavioursUrl(f, C.sha256))).status, 200);
  f.setFaults({ forbidden: undefined, notFoundHashes: [C.sha1] });
  assert.equal((await getJson(behavioursUrl(f, A.sha256))).status, 200);
  assert.deepEqual(await errorOf(behavioursUrl(f, C.md5)), { status: 404, code: 'NotFoundError' });
  assert.deepEqual(await errorOf(behaviourUrl(f, first(C))), { status: 404, code: 'NotFoundError' });
  f.clearFaults();
  assert.equal((await getJson(behavioursUrl(f, C.md5))).status, 200);
  assert.throws(() => f.setFaults({ forbidden: ['xyz'] }), RangeError);
  assert.throws(() => f.setFaults({ resetMidBody: { paths: 'api' } }), RangeError);
  assert.throws(() => f.setFaults({ truncateArtefact: { atFraction: 1 } }), RangeError);
});

test('resetMidBody cuts the next collection page mid-body with the full content-length, then pages are whole', async () => {
  const f = await fake({ quotas: { alice: { x: 1 } } });
  f.setFaults({ resetMidBody: {} });
  assert.equal((await getJson(`${f.baseUrl}/users/alice/overall_quotas`)).status, 200, 'only paths under /api/v3/files/');
  const res = await fetch(behavioursUrl(f, A.sha256), { headers: key });
  assert.equal(res.status, 200);
  const length = Number(res.headers.get('content-length'));
  const { bytes, failed } = await readAll(res);
  assert.ok(failed || bytes.length < length, `client saw ${bytes.length}/${length} bytes without an error`);
  assert.ok(bytes.length <= Math.ceil(length / 2));
  assert.equal(f.faults.resetMidBody?.times, 0);
  const whole = await getJson(behavioursUrl(f, A.sha256));
  assert.equal(whole.body.data.length, 5);

  f.setFaults({ resetMidBody: { paths: '/api/v3/file_behaviours/', times: 1 } });
  assert.equal((await getJson(behavioursUrl(f, A.sha256))).status, 200);
  const cut = await fetch(behaviourUrl(f, first(A), '/attack_techniques'), { headers: key });
  const got = await readAll(cut);
  assert.ok(got.failed || got.bytes.length < Number(cut.headers.get('content-length')));
});

test('truncateArtefact cuts the next artefact downloads (endpoint and feed link), then they are intact', async () => {
  const f = await fake({ faults: { truncateArtefact: { times: 2, atFraction: 0.25 } } });
  const id = first(A);
  const viaApi = await fetch(behaviourUrl(f, id, '/pcap'), { headers: key });
  assert.equal(Number(viaApi.headers.get('content-length')), ART, 'full length advertised');
  const a = await readAll(viaApi);
  assert.ok(a.failed || a.bytes.length < ART);
  assert.ok(a.bytes.length <= ART / 4);
  const viaFeed = await readAll(await fetch(f.feedLink(id, 'evtx', { foreignHost: true })));
  assert.ok(viaFeed.failed || viaFeed.bytes.length < ART);
  assert.equal(f.faults.truncateArtefact?.times, 0);
  const whole = await fetch(behaviourUrl(f, id, '/pcap'), { headers: key });
  assert.ok(Buffer.from(await whole.arrayBuffer()).equals(A.artefacts![id]!.pcap!));
});

test("burst 429 with paths 'all' hits /files routes with Retry-After; the 'feed' default spares them but not feed links", async () => {
  const f = await fake();
  f.setFaults({ burst: { status: 429, count: 1, retryAfterS: 2, paths: 'all' } });
  const res = await fetch(behavioursUrl(f, A.sha256), { headers: key });
  assert.equal(res.status, 429);
  assert.equal(res.headers.get('retry-after'), '2');
  assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'QuotaExceededError');
  assert.equal((await getJson(behavioursUrl(f, A.sha256))).status, 200);

  f.setFaults({ burst: { status: 503, count: 1 } });
  assert.equal((await getJson(behavioursUrl(f, A.sha256))).status, 200);
  assert.equal((await getJson(`${f.baseUrl}/private/files/${A.sha256}`)).status, 200);
  assert.deepEqual(await errorOf(f.feedLink(first(A), 'pcap')), { status: 503, code: 'TransientError' });
  assert.equal((await fetch(f.feedLink(first(A), 'pcap'), { headers: key, redirect: 'manual' })).status, 302);
  assert.equal(f.countFor('/api/v3/feeds/file_behaviours/', 503), 1);
});

test('resetMidObject cuts single-object answers, resetApiBeforeHeaders resets file routes unanswered, and operations() counts answered requests per operation', async () => {
  const f = await fake({ quotas: { alice: { x: 1 } } });
  f.setFaults({ resetMidObject: { paths: '/api/v3/file_behaviours/' } });
  const cut = await fetch(behaviourUrl(f, first(A)), { headers: key });
  assert.equal(cut.status, 200);
  const got = await readAll(cut);
  assert.ok(got.failed || got.bytes.length < Number(cut.headers.get('content-length')));
  assert.equal(f.faults.resetMidObject?.times, 0);
  assert.equal((await getJson(behaviourUrl(f, first(A)))).status, 200);

  f.setFaults({ resetApiBeforeHeaders: 1 });
  await assert.rejects(fetch(`${f.baseUrl}/private/files/${A.sha256}`, { headers: key }));
  assert.equal(f.requests.at(-1)?.status, 0);
  assert.equal((await getJson(`${f.baseUrl}/private/files/${A.sha256}`)).status, 200);
  assert.equal((await getJson(`${f.baseUrl}/users/alice/overall_quotas`)).status, 200);
  assert.throws(() => f.setFaults({ resetMidObject: { paths: 'x' } }), RangeError);

  // a feed-line link on another host is the feed link's operation; a redirect target is none
  assert.equal((await fetch(f.feedLink(first(A), 'pcap', { foreignHost: true }))).status, 200);
  const viaApi = await fetch(behaviourUrl(f, first(A), '/evtx'), { headers: key });
  assert.equal(viaApi.status, 200);
  await viaApi.arrayBuffer();
  assert.equal(f.requests.at(-1)?.operation, null);
  assert.deepEqual(f.operations(), {
    'GET /file_behaviours/{id}': 2,
    'GET /private/files/{id}': 1,
    'GET /users/{id}/overall_quotas': 1,
    'GET /feeds/file_behaviours/{token}/pcap': 1,
    'GET /file_behaviours/{id}/evtx': 1,
  });
});
