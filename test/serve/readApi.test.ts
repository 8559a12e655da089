import assert from 'node:assert/strict';
import { once } from 'node:events';
import { copyFileSync, renameSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { lookupPrivateFiles } from '../../src/lookup/index.js';
import { createRedis } from '../../src/queue/index.js';
import { FailedAuth } from '../../src/ops/index.js';
import { encodePivotCursor, startReadApi } from '../../src/serve/index.js';
import { HUNT_LIMITS, openStore } from '../../src/store/index.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';
import { writeFeed } from '../../src/synth/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { runCli } from '../support/cli.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { damagePivotPages } from '../support/damageStore.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';

async function setup(serve: Record<string, unknown> = {}) {
  const dir = tempDir();
  await writeFeed({ out: join(dir, 'feed'), seed: 31, start: '202611080000', minutes: 4, perMinute: 40, malformedRate: 0, bigRate: 0 });
  const config = await testConfig(dir, { serve: { port: 0, ...serve } });
  const ctx = { config, log: createLogger('silent') };
  await runBackfillCommand({ source: `dir:${join(dir, 'feed')}` }, ctx);
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  return { dir, config, ctx, store };
}

test("the v3 envelope: a behaviour by id (spaces encoded), a file's behaviours with limit and cursor paging, errors with the upstream codes", async () => {
  const s = await setup();
  const api = await startReadApi({ config: s.config, store: s.store, log: createLogger('silent') });
  cleanup(() => api.close());
  const v3 = `${api.url}/api/v3`;
  // a file with several reports, one of them from a sandbox whose name has a space
  const top = await s.store.sink.top('behash', 1);
  const ids = await s.store.sink.query('behash', top[0]?.value as string);
  const withSpace = (await Promise.all(ids.map((id) => s.store.sink.get(id)))).find((d) => d?.sandbox_name.includes(' '));
  const doc = withSpace ?? (await s.store.sink.get(ids[0] as string));
  assert.ok(doc);
  const one = await fetch(`${v3}/file_behaviours/${encodeURIComponent(doc.id)}`);
  assert.equal(one.status, 200);
  const body = (await one.json()) as { data: { type: string; id: string; attributes: unknown; links: { self: string } } };
  assert.equal(body.data.type, 'file_behaviour');
  assert.equal(body.data.id, doc.id);
  assert.deepEqual(body.data.attributes, doc.attributes, 'attributes in their canonical names, as stored');
  assert.equal(body.data.links.self, `${v3}/file_behaviours/${encodeURIComponent(doc.id)}`);
  // the id as the feed may spell it, the hash in upper case: the same behaviour, and its related ones
  const pasted = `${doc.id.slice(0, 64).toUpperCase()}${doc.id.slice(64)}`;
  assert.equal((await fetch(`${v3}/file_behaviours/${encodeURIComponent(pasted)}`)).status, 200);
  assert.equal((await fetch(`${v3}/sandtrail/related/${encodeURIComponent(pasted)}`)).status, 200);

  // every report of the file, one per page, following links.next as a client does
  const expected = await s.store.sink.query('sha256', doc.sha256);
  const seen: string[] = [];
  let next: string | undefined = `${v3}/files/${doc.sha256.toUpperCase()}/behaviours?limit=1`;
  while (next) {
    const page = (await (await fetch(next)).json()) as {
      data: { id: string }[];
      meta: { count: number; cursor?: string };
      links: { next?: string };
    };
    assert.equal(page.meta.count, expected.length);
    seen.push(...page.data.map((d) => d.id));
    next = page.links.next;
    if (next) assert.equal(new URL(next).searchParams.get('cursor'), page.meta.cursor);
  }
  assert.deepEqual(seen, expected);
  // the same by its MD5: the later pages come by the SHA-256 the cursor names
  const md5 = (doc.context_attributes as { file_md5?: string } | undefined)?.file_md5;
  assert.ok(md5, 'the feed gave this report its MD5');
  const byMd5: string[] = [];
  for (let url: string | undefined = `${v3}/files/${md5}/behaviours?limit=1`; url;) {
    const page = (await (await fetch(url)).json()) as { data: { id: string }[]; links: { next?: string } };
    byMd5.push(...page.data.map((d) => d.id));
    url = page.links.next;
  }
  assert.deepEqual(byMd5, expected);

  const err = async (path: string, status: number, code: string): Promise<void> => {
    const r = await fetch(`${v3}${path}`);
    assert.equal(r.status, status, path);
    const e = (await r.json()) as { error: { code: string; message: string } };
    assert.equal(e.error.code, code, path);
    assert.ok(e.error.message.length > 0);
  };
  await err(`/files/${doc.sha256}/behaviours?limit=41`, 400, 'InvalidArgumentError');
  await err(`/files/${doc.sha256}/behaviours?cursor=nonsense`, 400, 'InvalidArgumentError');
  await err(`/files/${'0'.repeat(64)}/behaviours`, 404, 'NotFoundError');
  await err(`/file_behaviours/${'0'.repeat(64)}_Zenbox`, 404, 'NotFoundError');
  await err('/files/xyz/behaviours', 400, 'InvalidArgumentError');
  await err('/private/files/abc', 400, 'InvalidArgumentError');
  await err('/no/such/route', 404, 'NotFoundError');
  // a path Fastify cannot decode is answered in the same envelope, not Fastify's own
  await err('/file_behaviours/%E0%A4%A', 400, 'BadRequestError');

  // sandtrail's own searches in the same envelope, equal to the store's answers
  const stats = (await (await fetch(`${v3}/sandtrail/pivots/behash/${encodeURIComponent(top[0]?.value as string)}?limit=5`)).json()) as {
    data: { type: string; attributes: { behaviours: number; newest: unknown[] } };
    meta: { cursor?: string };
  };
  const direct = await s.store.hunt.pivotStats('behash', top[0]?.value as string, { limit: 5 });
  assert.equal(stats.data.type, 'sandtrail_pivot');
  assert.deepEqual(stats.data.attributes, JSON.parse(JSON.stringify(direct)));
  const related = (await (await fetch(`${v3}/sandtrail/related/${encodeURIComponent(doc.id)}`)).json()) as {
    data: { attributes: unknown };
  };
  assert.deepEqual(related.data.attributes, JSON.parse(JSON.stringify(await s.store.hunt.related(doc.id))));
  const file = (await (await fetch(`${v3}/sandtrail/files/${doc.sha256}`)).json()) as { data: { attributes: unknown } };
  assert.deepEqual(file.data.attributes, JSON.parse(JSON.stringify(await s.store.hunt.fileRollup(doc.sha256))));
  const topApi = (await (await fetch(`${v3}/sandtrail/top/behash?limit=3`)).json()) as { data: { attributes: { value: string } }[] };
  assert.deepEqual(
    topApi.data.map((d) => d.attributes.value),
    (await s.store.hunt.top('behash', { limit: 3 })).map((t) => t.value),
  );

  // a watch's hits, newest first, paged by cursor; since in epoch seconds as top takes it, or in milliseconds
  await s.store.watches.add({ name: 'w', conditions: [{ kind: 'behash', value: top[0]?.value as string }], notify: {}, createdAt: 1 });
  const hitAt = [1_700_000_000_000, 1_700_000_100_000, 1_700_000_200_000];
  for (const [k, at] of hitAt.entries()) {
    const d = (await s.store.sink.get(ids[k % ids.length] as string))!;
    const hit = { watch: 'w', behaviourId: d.id, lastModified: d.last_modification_date + k, sha256: d.sha256, sandbox: d.sandbox_name };
    assert.ok(await s.store.watches.recordHit({ ...hit, matched: [], at }, 1));
  }
  type Hits = { data: { type: string; attributes: { at: number } }[]; links: { next?: string } };
  const hitsAt = async (query: string): Promise<number[]> => {
    const r = await fetch(`${v3}/sandtrail/watches/w/hits${query}`);
    assert.equal(r.status, 200, query);
    const page = (await r.json()) as Hits;
    assert.ok(page.data.every((d) => d.type === 'sandtrail_watch_hit'));
    return page.data.map((d) => d.attributes.at);
  };
  assert.deepEqual(await hitsAt(''), [...hitAt].reverse());
  assert.deepEqual(await hitsAt('?since=1700000100'), [hitAt[2], hitAt[1]], 'seconds');
  assert.deepEqual(await hitsAt('?since=1700000100000'), [hitAt[2], hitAt[1]], 'milliseconds');
  const first = (await (await fetch(`${v3}/sandtrail/watches/w/hits?limit=2`)).json()) as Hits;
  assert.deepEqual(
    first.data.map((d) => d.attributes.at),
    [hitAt[2], hitAt[1]],
  );
  const rest = (await (await fetch(first.links.next as string)).json()) as Hits;
  assert.deepEqual(
    rest.data.map((d) => d.attributes.at),
    [hitAt[0]],
  );
  assert.equal(rest.links.next, undefined);
  // a filter holds on every page: the next link keeps since
  const sinceFirst = (await (await fetch(`${v3}/sandtrail/watches/w/hits?since=1700000100&limit=1`)).json()) as Hits & {
    links: { self: string };
  };
  assert.deepEqual(
    sinceFirst.data.map((d) => d.attributes.at),
    [hitAt[2]],
  );
  assert.equal(new URL(sinceFirst.links.self).searchParams.get('since'), '1700000100');
  const sinceRest = (await (await fetch(sinceFirst.links.next as string)).json()) as Hits;
  assert.deepEqual(
    sinceRest.data.map((d) => d.attributes.at),
    [hitAt[1]],
  );
  assert.equal(sinceRest.links.next, undefined);
  // a hit recorded between two pages (the newest of all) moves no page: the next one is not repeated
  const page1 = (await (await fetch(`${v3}/sandtrail/watches/w/hits?limit=2`)).json()) as Hits;
  const d0 = (await s.store.sink.get(ids[0] as string))!;
  const late = { watch: 'w', behaviourId: d0.id, lastModified: d0.last_modification_date + 7, sha256: d0.sha256, sandbox: d0.sandbox_name };
  assert.ok(await s.store.watches.recordHit({ ...late, matched: [], at: 1_700_000_300_000 }, 1));
  const page2 = (await (await fetch(page1.links.next as string)).json()) as Hits;
  assert.deepEqual(
    page2.data.map((d) => d.attributes.at),
    [hitAt[0]],
  );
  assert.deepEqual(await hitsAt('?limit=1'), [1_700_000_300_000]);
  await err('/sandtrail/watches/w/hits?since=1e9', 400, 'InvalidArgumentError');
  await err('/sandtrail/watches/nope/hits', 404, 'NotFoundError');
});

test('private file reports through /private/files/{sha256}; x-apikey checked against the configured keys; beyond loopback only with keys', async () => {
  const s = await setup({ apiKeys: 'key-one-0001-aaaa, key-two-0002-bbbb' });
  const f = makeFakeFile('serve-private', { withPrivate: true });
  const fake = await startFakeGti({ apiKey: 'gti', files: [f] });
  cleanup(() => fake.close());
  const redis = createRedis(s.config.redisUrl as string, { redisCluster: false });
  cleanup(() => redis.disconnect());
  const config = { ...s.config, gti: { ...s.config.gti, apiKey: 'gti', baseUrl: fake.baseUrl } };
  const account = accountApi(fake, config);
  account.summary((await lookupPrivateFiles({ config, redis, store: s.store, hashes: [f.sha256], run: 'p' })).api_units);
  const api = await startReadApi({ config: s.config, store: s.store, log: createLogger('silent') });
  cleanup(() => api.close());
  const v3 = `${api.url}/api/v3`;
  const missing = await fetch(`${v3}/private/files/${f.sha256}`);
  assert.equal(missing.status, 401);
  assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'AuthenticationRequiredError');
  const wrong = await fetch(`${v3}/private/files/${f.sha256}`, { headers: { 'x-apikey': 'nope' } });
  assert.equal(((await wrong.json()) as { error: { code: string } }).error.code, 'WrongCredentialsError');
  const ok = await fetch(`${v3}/private/files/${f.sha256}`, { headers: { 'x-apikey': 'key-two-0002-bbbb' } });
  assert.equal(ok.status, 200);
  const body = (await ok.json()) as { data: { type: string; id: string; attributes: Record<string, unknown> } };
  assert.equal(body.data.type, 'private_file');
  assert.equal(body.data.id, f.sha256);
  assert.equal(body.data.attributes.md5, f.md5);
  assert.deepEqual(body.data.attributes.gti_assessment, f.gtiAssessment);
  // the page itself holds no data and needs no key
  assert.equal((await fetch(`${api.url}/`)).status, 200);

  await assert.rejects(
    startReadApi({
      config: { ...s.config, serve: { ...s.config.serve, host: '0.0.0.0', apiKeys: undefined } },
      store: s.store,
      log: createLogger('silent'),
    }),
    /serve\.host 0\.0\.0\.0 is reachable beyond this machine: set serve\.apiKeys/,
  );
});

/** A raw HTTP/1.1 exchange, so the Host header and the request target are what the test says. */
function rawGet(
  url: string,
  target: string,
  host: string,
  more: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: string; allow?: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const method = more.method ?? 'GET';
    const req = request({ host: hostname, port, method, path: target, headers: { host, ...more.headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (s: string) => (body += s));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, allow: res.headers.allow }));
    });
    req.on('error', reject).end(more.body);
  });
}

/** Sends `raw` bytes as they are and reads the whole answer (a request no HTTP client would send). */
async function rawRequest(url: string, raw: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let answer = '';
  socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
  socket.write(raw);
  await once(socket, 'close');
  return answer;
}

test('keys guard every route by its match, not its spelling; keyless answers loopback host names only; store faults in the envelope; a stop cuts a stalled request', async () => {
  const keyed = await setup({ apiKeys: 'key-three-0003-cc' });
  const api = await startReadApi({ config: keyed.config, store: keyed.store, log: createLogger('silent') });
  cleanup(() => api.close());
  const host = new URL(api.url).host;
  for (const target of [
    '/%61pi/v3/sandtrail/top/behash',
    `${api.url}/api/v3/sandtrail/top/behash`,
    'http://elsewhere.example/api/v3/sandtrail/top/behash',
    '/api/v3//sandtrail/top/behash',
  ]) {
    const r = await rawGet(api.url, target, host);
    assert.equal(r.status, 401, target);
    assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'AuthenticationRequiredError', target);
  }
  assert.equal((await rawGet(api.url, '/api/v3/sandtrail/top/behash', host)).status, 401);

  const open = await setup();
  const log: { obj: unknown; msg: string }[] = [];
  const logger = createLogger('silent');
  logger.error = ((obj: unknown, msg: string) => void log.push({ obj, msg })) as typeof logger.error;
  const api2 = await startReadApi({ config: open.config, store: open.store, log: logger });
  const v3 = `${api2.url}/api/v3`;
  const host2 = new URL(api2.url).host;
  assert.equal((await rawGet(api2.url, '/api/v3/sandtrail/top/behash', host2)).status, 200);
  assert.equal((await rawGet(api2.url, '/api/v3/sandtrail/top/behash', `localhost:${new URL(api2.url).port}`)).status, 200);
  const rebound = await rawGet(api2.url, '/api/v3/sandtrail/top/behash', 'attacker.example:80');
  assert.equal(rebound.status, 403, 'a page reaching the server through DNS rebinding');
  assert.equal((JSON.parse(rebound.body) as { error: { code: string } }).error.code, 'ForbiddenError');
  assert.equal((await rawGet(api2.url, '/', 'attacker.example')).status, 403);

  const code = async (path: string): Promise<[number, string]> => {
    const r = await fetch(`${v3}${path}`);
    return [r.status, ((await r.json()) as { error?: { code: string } }).error?.code ?? 'ok'];
  };
  // an id longer than Fastify's default 100-character parameter is looked up, not refused
  assert.deepEqual(await code(`/file_behaviours/${'0'.repeat(64)}_${'Long Sandbox Name '.repeat(8)}`), [404, 'NotFoundError']);
  assert.deepEqual(await code('/sandtrail/top/behash?limit=0x2'), [400, 'InvalidArgumentError']);
  assert.deepEqual(await code('/sandtrail/top/behash?limit=1e1'), [400, 'InvalidArgumentError']);
  assert.deepEqual(await code('/sandtrail/top/behash?since='), [400, 'InvalidArgumentError']);
  const [one] = await open.store.sink.top('behash', 1);
  const upper = (await (await fetch(`${v3}/sandtrail/pivots/behash/${(one?.value as string).toUpperCase()}`)).json()) as {
    data: { id: string; attributes: { value: string } };
  };
  assert.deepEqual([upper.data.id, upper.data.attributes.value], [`behash:${one?.value}`, one?.value], 'the id says the value compared');
  const [id] = await open.store.sink.query('behash', one?.value as string);
  const related = (await (await fetch(`${v3}/sandtrail/related/${encodeURIComponent(id as string)}?limit=1`)).json()) as {
    data: { attributes: unknown };
  };
  assert.deepEqual(related.data.attributes, JSON.parse(JSON.stringify(await open.store.hunt.related(id as string, { limit: 1 }))));

  // a damaged store: the v3 envelope, 503, no file path for the client; the whole cause in the log
  damagePivotPages(open.config.store.slice('sqlite:'.length));
  const r = await fetch(`${v3}/sandtrail/pivots/behash/${encodeURIComponent(one?.value as string)}`);
  const text = await r.text();
  assert.equal(r.status, 503, text);
  assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'TransientError');
  assert.ok(!text.includes(open.dir), text);
  assert.match(JSON.stringify(log), /STORE_DAMAGED/);

  // a client that sent half a request does not hold the stop
  const socket = connect(Number(new URL(api2.url).port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`GET /api/v3/sandtrail/top/behash HTTP/1.1\r\nHost: ${host2}\r\n`);
  cleanup(() => socket.destroy());
  const started = Date.now();
  await api2.close();
  assert.ok(Date.now() - started < 15_000, `close took ${Date.now() - started} ms`);
}, 60_000);

test('a pivot pages through the newest 10,000 behaviours of a value: the last page ends at the window, a cursor past it is refused', async () => {
  const dir = tempDir();
  const config = await testConfig(dir, { serve: { port: 0 } });
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const value = 'feedface'.repeat(4);
  const total = HUNT_LIMITS.window + 50;
  for (let from = 0; from < total; from += 2000) {
    const docs = Array.from({ length: Math.min(2000, total - from) }, (_, i) =>
      makeDoc((from + i + 1).toString(16).padStart(64, '0'), 'Zenbox', 1_793_480_000 + from + i, { behash: value }),
    );
    await store.sink.upsert(sinkDocs(docs));
  }
  const api = await startReadApi({ config, store, log: createLogger('silent') });
  cleanup(() => api.close());
  // the cursor of the page starting at `offset`: it names the behaviour before (the k-th stored is at place total - 1 - k)
  const cursorAt = (offset: number): string => {
    const k = total - offset;
    return encodePivotCursor({ offset, date: 1_793_480_000 + k - 5, id: `${(k + 1).toString(16).padStart(64, '0')}_Zenbox` });
  };
  const at = (offset: number): string => `${api.url}/api/v3/sandtrail/pivots/behash/${value}?limit=40&cursor=${cursorAt(offset)}`;
  type Page = {
    data: { attributes: { behaviours: number; newest: { id: string }[] } };
    meta: { cursor?: string; window_end?: boolean };
    links: { self: string; next?: string };
  };
  const before = (await (await fetch(at(HUNT_LIMITS.window - 80))).json()) as Page;
  assert.equal(before.data.attributes.behaviours, total);
  assert.equal(before.data.attributes.newest.length, 40);
  assert.equal(new URL(before.links.self).searchParams.get('cursor'), cursorAt(HUNT_LIMITS.window - 80), 'self names the page asked for');
  // the page that reaches the window: no next page, and the meta says more exist than pages reach
  const last = (await (await fetch(before.links.next as string)).json()) as Page;
  assert.equal(last.data.attributes.newest.length, 40);
  assert.equal(last.meta.cursor, undefined);
  assert.equal(last.links.next, undefined);
  assert.equal(last.meta.window_end, true);
  // a page that starts inside the window and would end past it ends at the window
  const short = (await (await fetch(at(HUNT_LIMITS.window - 20))).json()) as Page;
  assert.deepEqual(
    short.data.attributes.newest.map((b) => b.id),
    last.data.attributes.newest.slice(20).map((b) => b.id),
  );
  const past = await fetch(at(HUNT_LIMITS.window));
  assert.equal(past.status, 400);
  assert.equal(((await past.json()) as { error: { code: string } }).error.code, 'InvalidArgumentError');

  // behaviours stored (newer, so first) and expired between two pages move no page: none repeated or skipped
  const first = (await (await fetch(`${api.url}/api/v3/sandtrail/pivots/behash/${value}?limit=40`)).json()) as Page;
  const newer = Array.from({ length: 30 }, (_, i) =>
    makeDoc((total + 100 + i).toString(16).padStart(64, '0'), 'Zenbox', 1_800_000_000 + i, { behash: value }),
  );
  await store.sink.upsert(sinkDocs(newer));
  const second = (await (await fetch(first.links.next as string)).json()) as Page;
  const ids = (p: Page): string[] => p.data.attributes.newest.map((b) => b.id);
  const k = (p: number): string => `${(total - p).toString(16).padStart(64, '0')}_Zenbox`;
  assert.deepEqual(
    ids(second),
    Array.from({ length: 40 }, (_, i) => k(40 + i)),
    'the page after the first, as if nothing was stored',
  );
  // many more stored than the slack around the anchor: still the page after it
  const many = Array.from({ length: 500 }, (_, i) =>
    makeDoc((total + 1000 + i).toString(16).padStart(64, '0'), 'Zenbox', 1_800_100_000 + i, { behash: value }),
  );
  await store.sink.upsert(sinkDocs(many));
  const third = (await (await fetch(second.links.next as string)).json()) as Page;
  assert.deepEqual(
    ids(third),
    Array.from({ length: 40 }, (_, i) => k(80 + i)),
  );
}, 60_000);

test('another method on a path the API answers is 405 naming GET; links start with serve.publicUrl, whatever Host a request names', async () => {
  const s = await setup({ apiKeys: 'key-four-0004-ddd', publicUrl: 'https://hunt.example.org/sandtrail/' });
  const api = await startReadApi({ config: s.config, store: s.store, log: createLogger('silent') });
  cleanup(() => api.close());
  const key = { 'x-apikey': 'key-four-0004-ddd' };
  const [top] = await s.store.sink.top('behash', 1);
  assert.ok(top);
  const path = `/api/v3/sandtrail/pivots/behash/${encodeURIComponent(top.value)}`;
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    const r = await rawGet(api.url, path, 'attacker.example', { method, headers: key });
    assert.equal(r.status, 405, method);
    assert.equal(r.allow, 'GET, HEAD');
    assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'MethodNotAllowedError');
  }
  assert.equal((await rawGet(api.url, '/', 'x', { method: 'POST', headers: key })).status, 405);
  // unknown paths stay 404, and the key is asked for before the method is judged
  assert.equal((await rawGet(api.url, '/api/v3/nothing/here', 'x', { method: 'POST', headers: key })).status, 404);
  assert.equal((await rawGet(api.url, path, 'x', { method: 'DELETE' })).status, 401);

  const r = await rawGet(api.url, `${path}?limit=1`, 'attacker.example', { headers: key });
  assert.equal(r.status, 200);
  assert.ok(!r.body.includes('attacker.example'), 'no link names the Host a request gave');
  const page = JSON.parse(r.body) as { data: { links: { self: string } }; links: { self: string; next?: string } };
  const base = 'https://hunt.example.org/sandtrail/api/v3/sandtrail/';
  assert.equal(page.data.links.self, `${base}pivots/behash/${encodeURIComponent(top.value)}`);
  assert.equal(page.links.self, `${base}pivots/behash/${encodeURIComponent(top.value)}?limit=1`);
  if (top.count > 1) assert.ok(page.links.next?.startsWith(base));
});

test('every other method is 405 whatever its body; malformed requests and bogus cursors are 400 in the envelope; links are encoded; upstream links are not served; since in milliseconds', async () => {
  const s = await setup();
  const api = await startReadApi({ config: s.config, store: s.store, log: createLogger('silent') });
  cleanup(() => api.close());
  const v3 = `${api.url}/api/v3`;
  const host = new URL(api.url).host;
  const [top] = await s.store.sink.top('behash', 1);
  assert.ok(top);
  const path = `/api/v3/sandtrail/pivots/behash/${encodeURIComponent(top.value)}`;
  for (const [method, headers, body] of [
    ['TRACE', {}, undefined],
    ['PROPFIND', {}, undefined],
    ['POST', { 'content-type': 'application/json' }, '{not json'],
    ['POST', { 'content-type': 'text/xml' }, '<a/>'],
    // (the length said: Node's client sends a DELETE body with neither a length nor chunks)
    ['DELETE', { 'content-type': 'application/json', 'content-length': '2000000' }, 'x'.repeat(2_000_000)],
  ] as const) {
    const r = await rawGet(api.url, path, host, { method, headers, body });
    assert.equal(r.status, 405, `${method} ${r.body}`);
    assert.equal((JSON.parse(r.body) as { error: { code: string } }).error.code, 'MethodNotAllowedError');
  }
  for (const raw of [
    'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
    'NOT HTTP AT ALL\r\n\r\n',
    `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
  ]) {
    const answer = await rawRequest(api.url, raw);
    assert.match(answer, /^HTTP\/1\.1 4(00|31) /, answer);
    const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'BadRequestError');
  }

  // a file's pages: only the cursor given out is one; the self link carries it encoded
  const ids = await s.store.sink.query('behash', top.value);
  const doc = (await s.store.sink.get(ids[0] as string))!;
  // a file of three reports
  const three = ['Zenbox', 'CAPE Sandbox', 'VirusTotal Jujubox'].map((box) => makeDoc('f'.repeat(64), box, 1_790_000_000, {}));
  await s.store.sink.upsert(sinkDocs(three));
  const files = `${v3}/files/${'f'.repeat(64)}/behaviours`;
  const firstPage = (await (await fetch(`${files}?limit=1`)).json()) as { meta: { cursor: string } };
  const cursor = firstPage.meta.cursor;
  for (const bad of ['bzE%20', 'b!z*E', 'bzE=', `${cursor}%3D`, `${cursor}%20`]) {
    const r = await fetch(`${files}?limit=1&cursor=${bad}`);
    assert.equal(r.status, 400, bad);
  }
  const tampered = await fetch(`${files}?limit=1&cursor=${encodeURIComponent(`${cursor}&limit=40#x`)}`);
  assert.equal(tampered.status, 400);
  const page = (await (await fetch(`${files}?limit=1&cursor=${cursor}`)).json()) as { links: { self: string } };
  assert.equal(page.links.self, `${files}?limit=1&cursor=${cursor}`);

  // a report added before the page a client was on moves no page: nothing is repeated or skipped
  const walk = async (add?: () => Promise<unknown>): Promise<string[]> => {
    const seen: string[] = [];
    let url: string | undefined = `${files}?limit=1`;
    while (url) {
      const p = (await (await fetch(url)).json()) as { data: { id: string }[]; links: { next?: string } };
      seen.push(...p.data.map((d) => d.id));
      if (seen.length === 2 && add) await add();
      url = p.links.next;
    }
    return seen;
  };
  const before = await walk(() => s.store.sink.upsert(sinkDocs(makeDoc('f'.repeat(64), 'AAA Box', 1_790_000_000, {}))));
  assert.deepEqual(before, three.map((d) => d.id).sort());

  // reports of MBs: a page ends once it holds 16 MiB, the rest follows on the next
  const big = ['B1', 'B2', 'B3'].map((box) => makeDoc('9'.repeat(64), box, 1_790_000_000, { hosts_file: box.repeat(4_500_000) }));
  await s.store.sink.upsert(sinkDocs(big));
  const sizes: number[] = [];
  const bigIds: string[] = [];
  for (let url: string | undefined = `${v3}/files/${'9'.repeat(64)}/behaviours?limit=40`; url;) {
    const p = (await (await fetch(url)).json()) as { data: { id: string }[]; links: { next?: string } };
    sizes.push(p.data.length);
    bigIds.push(...p.data.map((d) => d.id));
    url = p.links.next;
  }
  assert.deepEqual(sizes, [2, 1]);
  assert.deepEqual(bigIds, big.map((d) => d.id).sort());

  // relationships as stored, but no link to the upstream API a client would send its key to
  const rel = {
    file: {
      data: { type: 'file', id: doc.sha256 },
      links: { self: 'https://www.virustotal.com/api/v3/x', related: 'https://www.virustotal.com/api/v3/y' },
    },
  };
  const stored = { ...makeDoc('e'.repeat(64), 'Zenbox', 1_790_000_000, {}), relationships: rel };
  await s.store.sink.upsert(sinkDocs(stored));
  const served = (await (await fetch(`${v3}/file_behaviours/${encodeURIComponent(stored.id)}`)).json()) as {
    data: { relationships: unknown };
  };
  assert.deepEqual(served.data.relationships, { file: { data: { type: 'file', id: doc.sha256 } } });
  assert.ok(!JSON.stringify(served).includes('virustotal.com'));

  // since: epoch seconds, or milliseconds (12 digits or more), on top as on watch hits
  const since = doc.analysis_date ?? 0;
  const inS = (await (await fetch(`${v3}/sandtrail/top/behash?since=${since}`)).json()) as { data: unknown[] };
  const inMs = (await (await fetch(`${v3}/sandtrail/top/behash?since=${since * 1000}`)).json()) as { data: unknown[] };
  assert.ok(inS.data.length > 0);
  assert.deepEqual(inMs, inS);
});

test('a store file removed or replaced while serving is said (503), not read as if it were still there', async () => {
  const s = await setup();
  const api = await startReadApi({ config: s.config, store: s.store, log: createLogger('silent') });
  cleanup(() => api.close());
  const v3 = `${api.url}/api/v3`;
  assert.equal((await fetch(`${v3}/sandtrail/top/behash`)).status, 200);
  const file = join(s.dir, 'store.db');
  // a restore from a backup: another file renamed over the path
  copyFileSync(file, `${file}.restored`);
  renameSync(`${file}.restored`, file);
  const r = await fetch(`${v3}/sandtrail/top/behash`);
  assert.equal(r.status, 503);
  const e = (await r.json()) as { error: { code: string; message: string } };
  assert.equal(e.error.code, 'TransientError');
  assert.match(e.error.message, /the store file was removed or replaced since this server started: restart it/);
  assert.equal((await fetch(`${api.url}/`)).status, 200, 'the page itself still loads');
});

test('serve.apiKeys: each key needs the 16 characters http.token does, refused at start-up without repeating it; every answer carries the security headers', async () => {
  const weak = await runCli(['serve', '--port', '0', '--host', '0.0.0.0', '--store', 'sqlite:/nonexistent/x.db'], {
    env: { SANDTRAIL_SERVE_API_KEYS: 'a-strong-key-0001-xyz,short1', REDIS_URL: '' },
  });
  assert.notEqual(weak.code, 0);
  assert.match(weak.stderr, /serve\.apiKeys.*key 2 of 2 has 6 characters: each key needs 16 or more/);
  assert.ok(!weak.stderr.includes('short1') && !weak.stderr.includes('a-strong-key-0001-xyz'), 'no key is repeated');

  const s = await setup({ apiKeys: 'headers-key-000001' });
  const api = await startReadApi({ config: s.config, store: s.store, log: createLogger('silent') });
  cleanup(() => api.close());
  for (const [path, key] of [
    ['/api/v3/sandtrail/top/behash', 'headers-key-000001'],
    ['/api/v3/sandtrail/top/behash', undefined],
    ['/api/v3/no-such-route', 'headers-key-000001'],
  ] as const) {
    const r = await fetch(`${api.url}${path}`, { headers: key ? { 'x-apikey': key } : {} });
    assert.equal(r.headers.get('content-security-policy'), "default-src 'none'; frame-ancestors 'none'", path);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(r.headers.get('x-frame-options'), 'DENY');
    assert.equal(r.headers.get('referrer-policy'), 'no-referrer');
  }
  const page = await fetch(`${api.url}/`);
  assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self' 'sha256-/);
});

test('wrong keys from one address: past the limit its requests get 429 with Retry-After, a right key included, and one warning names the address, never a key', async () => {
  const s = await setup({ apiKeys: 'the-right-key-00001' });
  const lines: string[] = [];
  const log = createLogger('warn', {}, { destination: { write: (l: string) => void lines.push(l) } });
  const api = await startReadApi({ config: s.config, store: s.store, log, failedKeys: new FailedAuth({ limit: 3 }) });
  cleanup(() => api.close());
  const get = (key: string): Promise<Response> => fetch(`${api.url}/api/v3/sandtrail/top/behash`, { headers: { 'x-apikey': key } });
  assert.equal((await get('the-right-key-00001')).status, 200);
  for (let i = 1; i <= 3; i++) assert.equal((await get(`guess-number-${i}-xxxx`)).status, 401, `guess ${i}`);
  const held = await get('the-right-key-00001');
  assert.equal(held.status, 429);
  assert.ok(Number(held.headers.get('retry-after')) > 0);
  assert.equal(((await held.json()) as { error: { code: string } }).error.code, 'TooManyRequestsError');
  const warned = lines.filter((l) => l.includes('repeated wrong API keys'));
  assert.equal(warned.length, 1, lines.join(''));
  assert.match(warned[0] ?? '', /"address":"127\.0\.0\.1"/);
  assert.ok(!lines.join('').includes('guess-number') && !lines.join('').includes('the-right-key'), 'no key is logged');
});

test("with keys and no serve.publicUrl, links never follow the request's Host: they are path-absolute", async () => {
  const s = await setup({ apiKeys: 'links-key-0000001' });
  const api = await startReadApi({ config: s.config, store: s.store, log: createLogger('silent') });
  cleanup(() => api.close());
  const [top] = await s.store.sink.top('behash', 1);
  const r = await rawGet(api.url, `/api/v3/sandtrail/pivots/behash/${encodeURIComponent(top?.value ?? '')}?limit=1`, 'evil.example', {
    headers: { 'x-apikey': 'links-key-0000001' },
  });
  assert.equal(r.status, 200, r.body);
  const body = JSON.parse(r.body) as { data: { links: { self: string } }; links: { self: string; next?: string } };
  assert.ok(!r.body.includes('evil.example'), 'the forged Host is nowhere in the answer');
  assert.match(body.data.links.self, /^\/api\/v3\/sandtrail\/pivots\/behash\//);
  assert.match(body.links.next ?? '', /^\/api\/v3\/sandtrail\/pivots\/behash\/.*cursor=/);
});

test('CONNECT, which Node never routes, gets the JSON 405 every other method gets', async () => {
  const s = await setup();
  const api = await startReadApi({ config: s.config, store: s.store, log: createLogger('silent') });
  cleanup(() => api.close());
  const answer = await rawRequest(api.url, 'CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n');
  assert.match(answer, /^HTTP\/1\.1 405 /);
  assert.match(answer, /\r\nAllow: GET, HEAD\r\n/);
  assert.deepEqual(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)), {
    error: { code: 'MethodNotAllowedError', message: 'CONNECT is not allowed here: this API only reads (GET)' },
  });
});
