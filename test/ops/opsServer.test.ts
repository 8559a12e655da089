import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'vitest';
import { ARTEFACT_QUEUE } from '../../src/artefacts/index.js';
import { Queue } from 'bullmq';
import { baseEnv, builtWorker } from '../support/cli.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, uniquePrefix } from '../support/env.js';
import { startTestOps } from '../support/testOps.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';
import { freePort, RedisServer } from '../support/redisServer.js';

const TOKEN = 'a-long-enough-test-token-7fd2';

async function ops(dir: string, http: Record<string, unknown>) {
  return (await startTestOps(dir, http)).server;
}

test('beyond loopback the server refuses to start without credentials; with them, every route but /healthz needs them', async () => {
  const dir = tempDir();
  await assert.rejects(ops(dir, { host: '0.0.0.0' }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'CONFIG_INVALID');
    assert.match(err.message, /http\.host 0\.0\.0\.0 is reachable beyond this machine: set http\.token/);
    return true;
  });
  const bearer = await ops(dir, { host: '0.0.0.0', token: TOKEN });
  const port = new URL(bearer.url).port;
  const at = (p: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${port}${p}`, { headers });
  assert.equal((await at('/healthz')).status, 200);
  for (const p of ['/metrics', '/readyz', '/queues']) {
    const r = await at(p);
    assert.equal(r.status, 401, p);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/);
    assert.equal((await at(p, { authorization: 'Bearer wrong-token-wrong-token' })).status, 401, p);
    assert.equal((await at(p, { authorization: `Bearer ${TOKEN}` })).status, 200, p);
  }
  const ready = await (await at('/readyz', { authorization: `Bearer ${TOKEN}` })).json();
  assert.deepEqual(ready, { ready: true, checks: { redis: 'ok', store: 'ok', draining: 'ok' } });

  const basic = await ops(dir, { username: 'ops', password: 'correct-horse' });
  const auth = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
  assert.equal((await fetch(`${basic.url}/metrics`)).status, 401);
  assert.equal((await fetch(`${basic.url}/metrics`, { headers: auth('ops', 'wrong-horse') })).status, 401);
  const m = await fetch(`${basic.url}/metrics`, { headers: auth('ops', 'correct-horse') });
  assert.equal(m.status, 200);
  assert.match(m.headers.get('content-type') ?? '', /^text\/plain/);
  assert.match(await m.text(), /^sandtrail_queue_jobs\{queue="artefacts",state="waiting"\} 0$/m);

  // keyless on loopback: a request under another host name is a web page come through DNS rebinding
  const open = await ops(dir, {});
  const status = (host: string, path: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const { hostname, port: p } = new URL(open.url);
      request({ host: hostname, port: p, path, headers: { host } }, (res) => resolve(res.resume().statusCode ?? 0))
        .on('error', reject)
        .end();
    });
  const port2 = new URL(open.url).port;
  assert.equal(await status(`127.0.0.1:${port2}`, '/metrics'), 200);
  assert.equal(await status(`localhost:${port2}`, '/queues'), 200);
  assert.equal(await status(`[::1]:${port2}`, '/metrics'), 200);
  assert.equal(await status('attacker.example', '/metrics'), 403);
  assert.equal(await status(`attacker.example:${port2}`, '/queues'), 403);
  assert.equal(await status('attacker.example', '/healthz'), 200, 'liveness stays open');
});

function startWorker(env: NodeJS.ProcessEnv): { child: ChildProcess; log: () => string } {
  const child = spawn(process.execPath, [builtWorker('lookup-worker')], {
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (text += s));
  cleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'close');
    }
  });
  return { child, log: () => text };
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('/readyz follows Redis down and back, turns not ready as soon as draining starts; the first SIGTERM drains and exits 0, a second forces', async () => {
  const redis = await RedisServer.start({ aof: false });
  cleanup(() => redis.stop());
  const f = makeFakeFile('ops-drain', { artefactBytes: 150_000 });
  const fake = await startFakeGti({ apiKey: 'ops-key-1', files: [f], faults: { slowBody: { bytesPerSecond: 50_000 } } });
  cleanup(() => fake.close());
  const dir = tempDir();
  const port = await freePort();
  const prefix = uniquePrefix();
  accountApi(fake, { redisUrl: redis.url, queuePrefix: prefix });
  const env = {
    REDIS_URL: redis.url,
    SANDTRAIL_QUEUE_PREFIX: prefix,
    SANDTRAIL_STORE: `sqlite:${join(dir, 'store.db')}`,
    SANDTRAIL_HTTP_PORT: String(port),
    SANDTRAIL_ARTEFACTS_DIR: join(dir, 'artefacts'),
    SANDTRAIL_LOG_LEVEL: 'info',
    GTI_APIKEY: 'ops-key-1',
    GTI_BASE_URL: fake.baseUrl,
  };
  const w = startWorker(env);
  const readyz = async () => {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`);
    return { status: r.status, body: (await r.json()) as { ready: boolean; reason?: string } };
  };
  await until('ready', async () => ((await readyz()).status === 200 ? true : undefined), 60_000);
  await redis.kill();
  const down = await until('not ready', async () => {
    const r = await readyz();
    return r.status === 503 ? r : undefined;
  });
  assert.match(down.body.reason ?? '', /^redis: /);
  // a scrape during the outage still answers, with the process's own counters and no queue depths
  const scrape = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(15_000) });
  assert.equal(scrape.status, 200);
  const text = await scrape.text();
  assert.match(text, /^sandtrail_batches_total|^# HELP sandtrail_batches_total/m);
  assert.doesNotMatch(text, /^sandtrail_queue_jobs\{/m);
  await redis.restart();
  await until('ready again', async () => ((await readyz()).status === 200 ? true : undefined));

  // a download slowed to ~3 s is in hand when the stop comes
  const q = new Queue(ARTEFACT_QUEUE, { connection: { url: redis.url } as never, prefix });
  cleanup(() => q.close());
  const id = String(f.behaviours[0]?.id);
  await q.add(
    'pcap',
    { behaviourId: id, sha256: f.sha256, sandbox: 'VirusTotal Jujubox', kind: 'pcap', source: 'endpoint' },
    { jobId: 'drain-1' },
  );
  await until('the job active', async () => ((await q.getJobCounts('active')).active === 1 ? true : undefined));
  w.child.kill('SIGTERM');
  const draining = await until(
    'draining',
    async () => {
      const r = await readyz();
      return r.status === 503 ? r : undefined;
    },
    5000,
  );
  assert.match(draining.body.reason ?? '', /draining/);
  const [code] = (await once(w.child, 'exit')) as [number | null];
  assert.equal(code, 0);
  assert.equal((await q.getJobCounts('completed')).completed, 1, 'the job in hand was finished, not dropped');
  for (const step of ['workers drained', 'Redis connections closed', 'store closed', 'worker stopped'])
    assert.ok(w.log().includes(`"msg":"${step}"`), step);

  // two signals: the second forces, the exit status says so
  const again = startWorker(env);
  await until('ready', async () => ((await readyz()).status === 200 ? true : undefined), 60_000);
  // the first behaviour has every artefact: its html report has not been fetched yet
  await q.add(
    'html',
    { behaviourId: id, sha256: f.sha256, sandbox: 'VirusTotal Jujubox', kind: 'html', source: 'endpoint' },
    { jobId: 'drain-2' },
  );
  await until('the job active', async () => ((await q.getJobCounts('active')).active === 1 ? true : undefined));
  again.child.kill('SIGTERM');
  await until('draining', async () => ((await readyz()).status === 503 ? true : undefined), 5000);
  again.child.kill('SIGTERM');
  const [forced] = (await once(again.child, 'exit')) as [number | null];
  assert.equal(forced, 130);
});

/** A raw connection that sends `head` and then one byte every `everyMs`, keeping what comes back and when it closed. */
function slowClient(port: number, head: string, everyMs = 500): { received: () => string; closed: Promise<number> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8').on('data', (d: string) => (received += d));
  socket.on('error', () => undefined);
  socket.write(head);
  const drip = setInterval(() => socket.writable && socket.write('x'), everyMs);
  const closed = once(socket, 'close').then(() => {
    clearInterval(drip);
    return Date.now();
  });
  cleanup(() => {
    clearInterval(drip);
    socket.destroy();
  });
  return { received: () => received, closed };
}

test('what a client sends is bounded: a body the server will not read is answered at once, a request not received within http.requestTimeoutMs gets 408 and is cut, CONNECT gets JSON; /healthz answers beside 100 slow sockets', async () => {
  const dir = tempDir();
  // long enough that what must come first (the 405s, the /healthz answers) has seconds of room on a busy machine
  const timeoutMs = 4000;
  const server = await ops(dir, { token: TOKEN, requestTimeoutMs: timeoutMs });
  const port = Number(new URL(server.url).port);
  const body = (auth: string): string =>
    `POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: text/plain\r\nContent-Length: 900000\r\n\r\nx`;

  // a body it will never read, with credentials or without: answered at once, the connection closed
  for (const auth of ['', `Authorization: Bearer ${TOKEN}\r\n`]) {
    const started = Date.now();
    const c = slowClient(port, body(auth));
    const closedAt = await c.closed;
    assert.match(c.received(), /^HTTP\/1\.1 405 /, auth || 'no credentials');
    assert.match(c.received(), /connection: close/i);
    assert.ok(closedAt - started < timeoutMs, `closed ${closedAt - started} ms after it was sent, before any timeout`);
  }

  // headers sent a byte at a time: cut once requestTimeoutMs has passed, with a 408
  const sentAt = Date.now();
  const slow = Array.from({ length: 100 }, () => slowClient(port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: '));
  const healthz: number[] = [];
  let answeredAt = 0;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    healthz.push(performance.now() - t);
    answeredAt = Date.now();
  }
  healthz.sort((a, b) => a - b);
  process.stderr.write(`opsServer: /healthz beside 100 slow sockets: ${healthz.map((t) => t.toFixed(1)).join(', ')} ms\n`);
  const closedAt = await Promise.all(slow.map((c) => c.closed));
  // not queued behind them: every /healthz was answered while all 100 were still held open
  assert.ok(
    answeredAt < Math.min(...closedAt),
    `the last /healthz was answered ${answeredAt - sentAt} ms after the slow sockets were opened, after the first was cut (${Math.min(...closedAt) - sentAt} ms)`,
  );
  const longest = Math.max(...closedAt) - sentAt;
  // deadlines are looked for every second: the bound is the setting plus that second, with room for a busy machine
  assert.ok(
    longest >= timeoutMs - 1000 && longest < timeoutMs + 10_000,
    `the last slow socket closed ${longest} ms after they were opened`,
  );
  for (const c of slow) assert.match(c.received(), /^HTTP\/1\.1 408 /);

  const answer = await new Promise<string>((resolve) => {
    const s = connect(port, '127.0.0.1');
    let text = '';
    s.setEncoding('utf8').on('data', (d: string) => (text += d));
    s.on('close', () => resolve(text)).on('error', () => undefined);
    s.write('CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n');
  });
  assert.match(answer, /^HTTP\/1\.1 405 /);
  assert.match(answer, /\{"error":"CONNECT is not allowed here"\}$/);
});

test('wrong credentials from one address: past ten a minute its requests get 429 with Retry-After, the right token included; /healthz stays open', async () => {
  const server = await ops(tempDir(), { token: TOKEN });
  const at = (token: string): Promise<Response> => fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  for (let i = 1; i <= 10; i++) assert.equal((await at(`wrong-token-number-${i}-xx`)).status, 401, `guess ${i}`);
  const held = await at(TOKEN);
  assert.equal(held.status, 429);
  assert.ok(Number(held.headers.get('retry-after')) > 0);
  assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
});
