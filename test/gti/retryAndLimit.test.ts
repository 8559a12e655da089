import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'vitest';
import { isRetryable, SandtrailError, type ErrorCode } from '../../src/errors/index.js';
import { callWithRetry, GtiClient, RedisRateLimiter } from '../../src/gti/index.js';
import { createRedis } from '../../src/queue/index.js';
import { cleanup, testRedisUrl } from '../support/env.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';

const KEY = 'retry-key-91c2';

/** A call failing with `codes` in turn (then answering 'done'), counting its tries. */
function failing(...codes: [ErrorCode, Record<string, unknown>?][]): { fn: () => Promise<string>; tries: () => number } {
  let n = 0;
  return {
    fn: async () => {
      const next = codes[n];
      n += 1;
      if (next) throw new SandtrailError(next[0], `try ${n}: ${next[0]}`, next[1] ?? {});
      return 'done';
    },
    tries: () => n,
  };
}

test('callWithRetry waits the Retry-After of a rate limit, then succeeds', async () => {
  const waits: { attempt: number; waitMs: number; code: string }[] = [];
  const call = failing(['GTI_RATE_LIMITED', { status: 429, retryAfterS: 1 }], ['GTI_TRANSIENT', { status: 503 }]);
  const started = Date.now();
  const out = await callWithRetry(call.fn, {
    retries: 3,
    backoffMs: 10,
    onRetry: ({ attempt, waitMs, code }) => waits.push({ attempt, waitMs, code }),
  });
  const took = Date.now() - started;
  assert.equal(out, 'done');
  assert.equal(call.tries(), 3);
  assert.ok(took >= 1000, `Retry-After 1 s honoured (took ${took} ms)`);
  assert.ok(took < 3000, `no extra wait (took ${took} ms)`);
  assert.deepEqual(waits[0], { attempt: 1, waitMs: 1000, code: 'GTI_RATE_LIMITED' });
  assert.equal(waits[1]?.code, 'GTI_TRANSIENT');
  assert.ok((waits[1]?.waitMs as number) >= 5 && (waits[1]?.waitMs as number) <= 25, 'backoff between backoffMs/2 and 2.5×backoffMs');
});

test('a Retry-After longer than maxWaitMs is capped', async () => {
  const waits: number[] = [];
  const call = failing(['GTI_RATE_LIMITED', { retryAfterS: 3600 }]);
  const started = Date.now();
  assert.equal(await callWithRetry(call.fn, { retries: 1, backoffMs: 10, maxWaitMs: 50, onRetry: (i) => waits.push(i.waitMs) }), 'done');
  assert.deepEqual(waits, [50]);
  // the hour asked for was not waited: a margin a busy machine cannot reach, nowhere near 3,600 s
  assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
});

test('refused credentials, 403, 404 and bad requests are thrown at once, never retried', async () => {
  for (const code of ['GTI_AUTH', 'GTI_FORBIDDEN', 'GTI_NOT_FOUND', 'GTI_BAD_REQUEST', 'BUDGET_EXCEEDED'] as const) {
    const call = failing([code, { retryAfterS: 0 }]);
    let retried = 0;
    await assert.rejects(
      callWithRetry(call.fn, { retries: 5, backoffMs: 1, onRetry: () => (retried += 1) }),
      (err: Error & { code?: string }) => err.code === code,
    );
    assert.equal(call.tries(), 1, `${code} tried once`);
    assert.equal(retried, 0);
  }
  // an error without a code (a bug) is not retried in place either
  let tries = 0;
  await assert.rejects(
    callWithRetry(
      async () => {
        tries += 1;
        throw new TypeError('boom');
      },
      { retries: 5, backoffMs: 1 },
    ),
    TypeError,
  );
  assert.equal(tries, 1);
});

test('retries stop after `retries`: the last error is thrown', async () => {
  const call = failing(
    ['GTI_TRANSIENT'],
    ['GTI_NETWORK'],
    ['GTI_BAD_RESPONSE'],
    ['GTI_RATE_LIMITED', { retryAfterS: 0 }],
    ['GTI_TRANSIENT'],
  );
  await assert.rejects(callWithRetry(call.fn, { retries: 3, backoffMs: 2 }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'GTI_RATE_LIMITED');
    assert.match(err.message, /^try 4:/);
    return true;
  });
  assert.equal(call.tries(), 4, 'the first try and 3 retries');

  const none = failing(['GTI_TRANSIENT']);
  await assert.rejects(callWithRetry(none.fn, { retries: 0, backoffMs: 1 }), { code: 'GTI_TRANSIENT' });
  assert.equal(none.tries(), 1);
});

test('an aborted signal ends the wait between tries', async () => {
  const call = failing(['GTI_RATE_LIMITED', { retryAfterS: 60 }]);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 50);
  const started = Date.now();
  await assert.rejects(callWithRetry(call.fn, { retries: 2, backoffMs: 1, signal: ac.signal }), { name: 'AbortError' });
  assert.ok(Date.now() - started < 5000);
  assert.equal(call.tries(), 1);
});

test('RedisRateLimiter: two limiters on one key share the per-minute count; the one over the limit waits for the next window', async () => {
  const redis = createRedis(await testRedisUrl(), { redisCluster: false });
  cleanup(() => redis.disconnect());
  const key = `t${randomBytes(5).toString('hex')}:ratelimit:gti`;
  // a clock 1 s before a minute boundary, held there (however slow the calls) until it is let run
  // at real speed for the wait at the window's edge, then held again in the next window
  const window = 29_000_000;
  const base = (window + 1) * 60_000 - 1000;
  let clock: () => number = () => base;
  const now = (): number => clock();
  const runFrom = (at: number): void => {
    const realStart = Date.now();
    clock = () => at + (Date.now() - realStart);
  };
  const windowOf = (t: number): number => Math.floor(t / 60_000);
  const a = new RedisRateLimiter(redis, key, 3, now);
  const b = new RedisRateLimiter(redis, key, 3, now);

  const got: { who: string; window: number }[] = [];
  const take = async (who: string, l: RedisRateLimiter): Promise<void> => {
    await l.acquire();
    got.push({ who, window: windowOf(now()) });
  };
  await take('a', a);
  await take('b', b);
  await take('a', a);
  assert.deepEqual(
    got.map((g) => g.window),
    [window, window, window],
    'the first three within the window',
  );
  assert.equal(await redis.get(`${key}:${window}`), '3');

  // the fourth, from either limiter, is over the shared limit: it waits for the next window
  runFrom(base);
  const fourth = Date.now();
  await take('b', b);
  const waited = Date.now() - fourth;
  assert.equal(got[3]?.window, window + 1, 'acquired in the next window');
  assert.ok(waited >= 700, `waited for the window edge (${waited} ms)`);
  assert.equal(await redis.get(`${key}:${window}`), '4', 'its refused try was counted in the old window');
  assert.equal(await redis.get(`${key}:${window + 1}`), '1');
  const ttl = await redis.ttl(`${key}:${window + 1}`);
  assert.ok(ttl > 0 && ttl <= 120, 'window counters expire');

  // the new window has room for two more: neither waits for a third window
  const held = now();
  clock = () => held;
  await take('a', a);
  await take('b', b);
  assert.deepEqual(
    got.slice(4).map((g) => g.window),
    [window + 1, window + 1],
  );
  assert.equal(await redis.get(`${key}:${window + 1}`), '3');
});

test('RedisRateLimiter: a limiter whose clock jumps a minute ahead is let through; an aborted wait rejects', async () => {
  const redis = createRedis(await testRedisUrl(), { redisCluster: false });
  cleanup(() => redis.disconnect());
  const key = `t${randomBytes(5).toString('hex')}:ratelimit:gti`;
  let t = 31_000_000 * 60_000 + 10_000; // 10 s into a window
  const limiter = new RedisRateLimiter(redis, key, 2, () => t);
  await limiter.acquire();
  await limiter.acquire();
  // over the limit with 50 s to go: the wait is abortable
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 50);
  const started = Date.now();
  await assert.rejects(limiter.acquire(ac.signal), { name: 'AbortError' });
  assert.ok(Date.now() - started < 5000);
  // the clock jumps into the next window: two more at once
  t += 60_000;
  await limiter.acquire();
  await limiter.acquire();
  assert.equal(await redis.get(`${key}:${31_000_000}`), '3');
  assert.equal(await redis.get(`${key}:${31_000_001}`), '2');
});

test('GtiClient.openLink sends x-apikey under the API base only: never to a foreign link, never to a redirect target', async () => {
  const file = makeFakeFile('openlink', { behaviours: 1, artefactBytes: 3000 });
  const id = String(file.behaviours[0]?.id);
  const pcap = file.artefacts?.[id]?.pcap as Buffer;
  const fake = await startFakeGti({ apiKey: KEY, files: [file], unmetered: 'the bare client with hooks of its own: no ledger' });
  cleanup(() => fake.close());
  const calls: string[] = [];
  const client = new GtiClient({
    baseUrl: fake.baseUrl,
    apiKey: KEY,
    timeoutMs: 5000,
    beforeCall: (c) => void calls.push(`before ${c.method} ${c.path}`),
    onCall: async (c) => void calls.push(`${c.method} ${c.path} ${c.status}`),
  });
  const read = async (link: string, as?: string): Promise<Buffer> => {
    const opened = await client.openLink(link, undefined, as);
    assert.ok(opened, `${link} opened`);
    const parts: Buffer[] = [];
    for await (const c of opened.body) parts.push(c);
    assert.equal(opened.bytes, pcap.length);
    return Buffer.concat(parts);
  };

  // a link on another host (here: outside the API base): fetched directly, without the key
  const foreign = fake.feedLink(id, 'pcap', { foreignHost: true });
  assert.equal(client.pathOf(foreign), null);
  assert.ok(Buffer.from(await read(foreign)).equals(pcap));
  assert.ok(Buffer.from(await read(foreign, '/feeds/file_behaviours/{token}/pcap')).equals(pcap));
  assert.deepEqual(
    fake.requests.map((r) => [r.path.split('/').slice(0, 3).join('/'), r.hadKey, r.status]),
    [
      ['/download/artefact', false, 200],
      ['/download/artefact', false, 200],
    ],
  );
  // the hooks hear of it under the name given (the link itself, with its token, is never a ledger path)
  assert.deepEqual(calls.splice(0), [
    'before GET /feeds/file_behaviours/{token}/link',
    'GET /feeds/file_behaviours/{token}/link 200',
    'before GET /feeds/file_behaviours/{token}/pcap',
    'GET /feeds/file_behaviours/{token}/pcap 200',
  ]);

  // a link under the API base: the key goes with it, not with the redirect to the storage host
  const feed = fake.feedLink(id, 'pcap');
  const path = client.pathOf(feed) as string;
  assert.match(path, /^\/feeds\/file_behaviours\/[^/]+\/pcap$/);
  assert.ok(Buffer.from(await read(feed)).equals(pcap));
  const [api, download] = fake.requests.slice(2);
  assert.deepEqual([api?.path, api?.hadKey, api?.status], [`/api/v3${path}`, true, 302]);
  assert.deepEqual([download?.path.startsWith('/download/artefact/'), download?.hadKey, download?.status], [true, false, 200]);
  assert.deepEqual(calls.splice(0), [`before GET ${path}`, `GET ${path} 302`]);
  assert.equal(fake.requests.length, 4);

  // look-alikes of the base are foreign; a path is under it
  assert.equal(client.pathOf(`${fake.origin}/api/v3x/feeds/file_behaviours/t/pcap`), null);
  assert.equal(client.pathOf(`${fake.baseUrl.replace('127.0.0.1', 'localhost')}/feeds/x`), null);
  assert.equal(client.pathOf(`https://127.0.0.1.evil.example/api/v3/feeds/x`), null);
  assert.equal(client.pathOf(`${fake.baseUrl}/feeds/x?token=1`), '/feeds/x?token=1');
  assert.equal(client.pathOf('/file_behaviours/x/pcap'), '/file_behaviours/x/pcap');

  // a foreign link the storage host refuses: GTI_FORBIDDEN, without the link's token in the message
  await assert.rejects(
    client.openLink(`${fake.origin}/download/artefact/${encodeURIComponent(id)}/pcap?token=secret-token`),
    (err: Error & { code?: string }) => {
      assert.equal(err.code, 'GTI_FORBIDDEN');
      assert.ok(!err.message.includes('secret-token'));
      return true;
    },
  );
  assert.equal(fake.requests.at(-1)?.hadKey, false);
  assert.ok(fake.requests.every((r) => r.hadKey === r.path.startsWith('/api/v3/')));
});

test('GtiClient.getJson and openJson follow redirects by hand: the key and x-tool only to the API origin (each hop a call), a loop refused', async () => {
  const seen: { host: string; path: string; key?: string; tool?: string }[] = [];
  const answer = (res: ServerResponse, status: number, body: unknown, location?: string): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...(location ? { location } : {}) });
    res.end(JSON.stringify(body));
  };
  const listen = async (name: string, route: (path: string, res: ServerResponse) => void): Promise<string> => {
    const server = createServer((req, res) => {
      seen.push({ host: name, path: req.url ?? '', key: req.headers['x-apikey'] as string, tool: req.headers['x-tool'] as string });
      route(req.url ?? '', res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const elsewhere = await listen('elsewhere', (_path, res) => answer(res, 200, { data: [{ id: 'from-elsewhere' }] }));
  const api = await listen('api', (path, res) => {
    if (path === '/api/v3/away') return answer(res, 302, {}, `${elsewhere}/api/v3/files/x`);
    if (path === '/api/v3/moved') return answer(res, 307, {}, '/api/v3/here');
    if (path === '/api/v3/here') return answer(res, 200, { data: { id: 'here' } });
    if (path === '/api/v3/loop') return answer(res, 302, {}, '/api/v3/loop');
    return answer(res, 404, { error: { code: 'NotFoundError' } });
  });
  const calls: string[] = [];
  const client = new GtiClient({
    baseUrl: `${api}/api/v3`,
    apiKey: KEY,
    xTool: 'sandtrail-test',
    timeoutMs: 5000,
    onCall: async (c) => void calls.push(`${c.method} ${c.path} ${c.status}`),
  });

  assert.deepEqual(await client.getJson('/moved'), { data: { id: 'here' } });
  assert.deepEqual(calls.splice(0), ['GET /moved 307', 'GET /here 200']);
  assert.deepEqual(await client.getJson('/away'), { data: [{ id: 'from-elsewhere' }] });
  const parts: Buffer[] = [];
  for await (const c of await client.openJson('/away')) parts.push(c);
  assert.equal(Buffer.concat(parts).toString(), JSON.stringify({ data: [{ id: 'from-elsewhere' }] }));
  assert.deepEqual(calls.splice(0), ['GET /away 302', 'GET /away 302'], 'another host is no API call');
  await assert.rejects(client.getJson('/loop'), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'GTI_BAD_RESPONSE');
    assert.match(err.message, /more than 5 redirects/);
    return true;
  });
  assert.equal(calls.length, 6);

  for (const r of seen) {
    assert.equal(r.key, r.host === 'api' ? KEY : undefined, `${r.host} ${r.path}`);
    assert.equal(r.tool, r.host === 'api' ? 'sandtrail-test' : undefined, `${r.host} ${r.path}`);
  }
  assert.equal(seen.filter((r) => r.host === 'elsewhere').length, 2);
});

test('a download refused by a storage host or feed link: 404 and 410 are gone (not retried), 401/403 final, other 4xx final, 408/425/5xx transient, 429 with its Retry-After', async () => {
  const statuses = [410, 404, 401, 403, 400, 408, 425, 500, 503, 429];
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/loop')) return void res.writeHead(302, { location: '/loop' }).end();
    const status = Number(req.url?.split('/')[2]);
    res.writeHead(status, status === 429 ? { 'retry-after': '7' } : {}).end('no');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new GtiClient({ baseUrl: 'http://127.0.0.1:9/api/v3', apiKey: KEY, timeoutMs: 5000 });
  const seen: string[] = [];
  for (const status of statuses) {
    const r = await client.openLink(`${host}/s/${status}/pcap?token=t0k3n`).then(
      (opened) => (opened === null ? 'gone' : 'opened'),
      (err: Error & { code?: string; details?: { retryAfterS?: number } }) =>
        `${err.code}${isRetryable(err) ? ' retried' : ''}${err.details?.retryAfterS ? ` after ${err.details.retryAfterS} s` : ''}`,
    );
    seen.push(`${status}: ${r}`);
  }
  assert.deepEqual(seen, [
    '410: gone',
    '404: gone',
    '401: GTI_FORBIDDEN',
    '403: GTI_FORBIDDEN',
    '400: GTI_BAD_REQUEST',
    '408: GTI_TRANSIENT retried',
    '425: GTI_TRANSIENT retried',
    '500: GTI_TRANSIENT retried',
    '503: GTI_TRANSIENT retried',
    '429: GTI_RATE_LIMITED retried after 7 s',
  ]);
  // redirects that never end: not asked again (each try would pay the API's hop to them)
  await assert.rejects(client.openLink(`${host}/loop`), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'GTI_BAD_RESPONSE');
    assert.equal(isRetryable(err), false);
    return true;
  });
});

test('a download the endpoint serves itself streams under 20× the call timeout; an answer that never begins still fails within the call timeout', async () => {
  const server = createServer((req, res) => {
    if (req.url?.endsWith('/hang')) return; // never answers
    res.writeHead(200, { 'content-length': '1500' });
    let sent = 0;
    const tick = setInterval(() => {
      res.write(Buffer.alloc(100, 1));
      sent += 100;
      if (sent >= 1500) {
        clearInterval(tick);
        res.end();
      }
    }, 100);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`;
  const client = new GtiClient({ baseUrl: base, apiKey: KEY, timeoutMs: 400 });
  // 1.5 s of body, past the call's 400 ms, within its 8 s
  const opened = await client.openDownload('/file_behaviours/x/pcap');
  assert.ok(opened);
  let bytes = 0;
  for await (const c of opened.body) bytes += c.length;
  assert.equal(bytes, 1500);
  const started = Date.now();
  await assert.rejects(client.openDownload('/file_behaviours/x/hang'), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'GTI_NETWORK');
    assert.match(err.message, /no answer within 400 ms/);
    return true;
  });
  assert.ok(Date.now() - started < 3000, `${Date.now() - started} ms`);
  // so does a storage host or feed link (outside the API base) that never answers
  const linked = Date.now();
  await assert.rejects(client.openLink(`${base.replace('/api/v3', '')}/storage/hang`), { code: 'GTI_NETWORK' });
  assert.ok(Date.now() - linked < 3000, `${Date.now() - linked} ms`);
});

test('the call timeouts fire whatever the garbage collector does, a stop signal given too: an answer that never begins, a body that stalls', async () => {
  // AbortSignal.timeout() combined by AbortSignal.any() can be collected on Node 20, and then never fires
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const collecting = setInterval(gc, 50);
  cleanup(() => clearInterval(collecting));
  const server = createServer((req, res) => {
    if (req.url?.endsWith('/hang')) return; // never answers
    res.writeHead(200, { 'content-length': '100000' });
    res.write(Buffer.alloc(1000, 1)); // then nothing more
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`;
  const stop = new AbortController();
  const client = new GtiClient({ baseUrl: base, apiKey: KEY, timeoutMs: 200, stopSignal: () => stop.signal });
  const started = Date.now();
  await assert.rejects(client.getJson('/hang'), { code: 'GTI_NETWORK' });
  assert.ok(Date.now() - started < 3000, `no answer: ${Date.now() - started} ms`);
  // a download's body has 20× the call timeout: 4 s
  const opened = await client.openDownload('/file_behaviours/x/pcap');
  assert.ok(opened);
  const reading = Date.now();
  await assert.rejects(async () => {
    for await (const c of opened.body) void c;
  });
  assert.ok(Date.now() - reading < 10_000, `stalled body: ${Date.now() - reading} ms`);
}, 30_000);

test("a storage host's redirect loop is not asked again; a redirect without a Location is asked once more, as any bad answer", async () => {
  const asked = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = req.url ?? '';
    asked.set(path, (asked.get(path) ?? 0) + 1);
    if (path === '/api/v3/file_behaviours/loop/pcap') return void res.writeHead(302, { location: '/storage/loop' }).end();
    if (path === '/storage/loop') return void res.writeHead(302, { location: '/storage/loop' }).end();
    if (path === '/api/v3/file_behaviours/nowhere/pcap') return void res.writeHead(302).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const client = new GtiClient({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`,
    apiKey: KEY,
    timeoutMs: 2000,
  });
  const retry = { retries: 4, backoffMs: 5 };
  await assert.rejects(
    callWithRetry(() => client.openDownload('/file_behaviours/loop/pcap'), retry),
    { code: 'GTI_BAD_RESPONSE' },
  );
  assert.equal(asked.get('/api/v3/file_behaviours/loop/pcap'), 1, 'each try is a paid call: the loop is not asked again');
  await assert.rejects(
    callWithRetry(() => client.openDownload('/file_behaviours/nowhere/pcap'), retry),
    { code: 'GTI_BAD_RESPONSE' },
  );
  assert.equal(asked.get('/api/v3/file_behaviours/nowhere/pcap'), 2);
});
