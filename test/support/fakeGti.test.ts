import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from 'vitest';
import { addMinutes, minuteToMs } from '../../src/minute/index.js';
import { writeFeed, type FeedManifest } from '../../src/synth/index.js';
import { cleanup } from './env.js';
import { startFakeGti, type FakeGti } from './fakeGti.js';

const KEY = 'fake-gti-key-5e1b77';
const START = '202611010000';
const HOUR = START.slice(0, 10);
const MISSING = addMinutes(START, 2);
const XTOOL = 'acme.sandtrail.0.1';

let dir: string;
let feedDir: string;
let manifest: FeedManifest;
let clock = minuteToMs(START);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fake-gti-test-'));
  feedDir = join(dir, 'feed');
  manifest = await writeFeed({ out: feedDir, seed: 3, start: START, minutes: 4, perMinute: 6, missingMinutes: [MISSING] });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function fake(over: Partial<Parameters<typeof startFakeGti>[0]> = {}): Promise<FakeGti> {
  const f = await startFakeGti({
    apiKey: KEY,
    feedDir,
    now: () => new Date(clock),
    unmetered: 'tests of the fake itself: raw HTTP, no ledger',
    ...over,
  });
  cleanup(() => f.close());
  return f;
}

const headers = { 'x-apikey': KEY, 'x-tool': XTOOL };
const feedUrl = (f: FakeGti, id: string, spelling = 'file_behaviours'): string =>
  `${f.baseUrl}/feeds/${spelling}/${id.length === 10 ? `hourly/${id}` : id}`;
const ask = (f: FakeGti, id: string, h: Record<string, string> = headers): Promise<Response> =>
  fetch(feedUrl(f, id), { headers: h, redirect: 'manual' });
const fileOf = (minute: string): Buffer => readFileSync(join(feedDir, `${minute}.jsonl.bz2`));

async function errorOf(res: Response): Promise<{ status: number; code: string | undefined }> {
  const body = (await res.json()) as { error?: { code?: string } };
  return { status: res.status, code: body.error?.code };
}

/** Follows the 302 by hand (no key on the download, as a client talking to the storage host). */
async function download(f: FakeGti, id: string): Promise<{ res: Response; bytes: Buffer }> {
  const api = await ask(f, id);
  assert.equal(api.status, 302, `${id}: ${api.status}`);
  const res = await fetch(api.headers.get('location')!);
  return { res, bytes: Buffer.from(await res.arrayBuffer()) };
}

test('auth: a missing key and a wrong key answer 401 with the upstream bodies; the key is never logged', async () => {
  const f = await fake();
  const missing = await fetch(feedUrl(f, START), { redirect: 'manual' });
  assert.equal(missing.status, 401);
  assert.deepEqual(await missing.json(), { error: { code: 'AuthenticationRequiredError', message: 'X-Apikey header is missing' } });
  const wrong = await ask(f, START, { 'x-apikey': 'not-the-key' });
  assert.deepEqual(await errorOf(wrong), { status: 401, code: 'WrongCredentialsError' });
  const ok = await ask(f, START);
  assert.equal(ok.status, 302);
  assert.deepEqual(
    f.requests.map((r) => [r.hadKey, r.xTool, r.status]),
    [
      [false, undefined, 401],
      [true, undefined, 401],
      [true, XTOOL, 302],
    ],
  );
  const log = JSON.stringify(f.requests);
  assert.ok(!log.includes(KEY) && !log.includes('not-the-key'), 'no key value in requests');
  assert.deepEqual(Object.keys(f.requests[0]!).sort(), ['hadKey', 'method', 'operation', 'path', 'query', 'status', 'xTool']);
  // the server's own count: answered requests per operation, the minute a template
  assert.deepEqual(f.operations(), { 'GET /feeds/file_behaviours/{id}': 3 });
});

test('overall_quotas still answers per user', async () => {
  const doc = { api_requests_daily: { user: { allowed: 10, used: 1 }, group: { allowed: 100, used: 5, inherited_from: 'soc' } } };
  const f = await fake({ quotas: { alice: doc } });
  const r = await fetch(`${f.baseUrl}/users/alice/overall_quotas`, { headers });
  assert.deepEqual(await r.json(), { data: doc });
  assert.deepEqual(await errorOf(await fetch(`${f.baseUrl}/users/bob/overall_quotas`, { headers })), {
    status: 404,
    code: 'NotFoundError',
  });
});

test('a minute answers 302 to a keyless download on the same server that streams the file verbatim', async () => {
  const f = await fake();
  const api = await ask(f, START);
  assert.equal(api.status, 302);
  const location = api.headers.get('location')!;
  assert.match(location, new RegExp(`^${f.origin}/download/minute/${START}\\?token=[0-9a-f]+$`));
  const res = await fetch(location);
  assert.equal(res.status, 200);
  const bytes = Buffer.from(await res.arrayBuffer());
  assert.equal(Number(res.headers.get('content-length')), manifest.files[0]!.bytesCompressed);
  assert.ok(bytes.equals(fileOf(START)));
  assert.deepEqual(f.requests.at(-1), {
    method: 'GET',
    path: `/download/minute/${START}`,
    query: location.slice(location.indexOf('?') + 1),
    hadKey: false,
    xTool: undefined,
    status: 200,
    operation: null,
  });
  // the download a 302 pointed to is part of the call that answered the 302
  assert.deepEqual(f.operations(), { 'GET /feeds/file_behaviours/{id}': 1 });

  // a forged token, or one for another minute, is refused
  assert.equal((await fetch(`${f.origin}/download/minute/${START}?token=nope`)).status, 403);
  assert.equal((await fetch(location.replace(START, addMinutes(START, 1)))).status, 403);
  // the other path spelling is not served unless configured
  assert.equal((await fetch(feedUrl(f, START, 'file-behaviours'), { headers, redirect: 'manual' })).status, 404);
  const dashed = await fake({ pathSpelling: 'file-behaviours' });
  assert.equal((await fetch(feedUrl(dashed, START, 'file-behaviours'), { headers, redirect: 'manual' })).status, 302);
  assert.equal(f.countFor('/api/v3/feeds/'), 2);
  assert.equal(f.countFor('/download/', 403), 2);
});

test('a minute without a file is 404 NotFoundError; a malformed minute is 400', async () => {
  const f = await fake();
  assert.deepEqual(await errorOf(await ask(f, MISSING)), { status: 404, code: 'NotFoundError' });
  assert.deepEqual(await errorOf(await ask(f, '202611011')), { status: 400, code: 'InvalidArgumentError' });
  const noDir = await fake({ feedDir: undefined });
  assert.equal((await ask(noDir, START)).status, 404);
});

test('NotAvailableYet by minute (notAvailableAfter) and by lag against now()', async () => {
  const f = await fake({ faults: { notAvailableAfter: addMinutes(START, 1) } });
  assert.equal((await ask(f, START)).status, 302);
  const nay = await ask(f, addMinutes(START, 1));
  assert.equal(nay.status, 400);
  assert.deepEqual(await errorOf(nay), { status: 400, code: 'NotAvailableYet' });
  assert.equal((await ask(f, HOUR)).status, 400, 'the hour holding it is not available either');
  f.clearFaults();
  assert.equal((await ask(f, addMinutes(START, 1))).status, 302);

  f.setFaults({ notAvailableLagMinutes: 60 });
  clock = minuteToMs(START) + 61 * 60_000; // START is published, START+1 not yet
  assert.equal((await ask(f, START)).status, 302);
  assert.deepEqual(await errorOf(await ask(f, addMinutes(START, 1))), { status: 400, code: 'NotAvailableYet' });
  clock += 60_000;
  assert.equal((await ask(f, addMinutes(START, 1))).status, 302);
  f.setFaults({ notAvailableLagMinutes: undefined });
  assert.deepEqual(f.faults, {});
});

test('notFoundTimes answers 404 the first N times, then serves; notFound always 404', async () => {
  const m = addMinutes(START, 1);
  const f = await fake();
  f.setFaults({ notFoundTimes: { [m]: 2 }, notFound: [START] });
  assert.deepEqual(await errorOf(await ask(f, m)), { status: 404, code: 'NotFoundError' });
  assert.deepEqual(f.faults.notFoundTimes, { [m]: 1 });
  assert.equal((await ask(f, m)).status, 404);
  assert.ok((await download(f, m)).bytes.equals(fileOf(m)));
  for (let i = 0; i < 3; i++) assert.equal((await ask(f, START)).status, 404);
  assert.equal(f.countFor(`/api/v3/feeds/file_behaviours/${m}`, 404), 2);
});

test('a 429 burst alternates the two upstream codes with Retry-After, then serves; 503/504 and paths', async () => {
  const f = await fake({ quotas: { alice: {} } });
  f.setFaults({ burst: { status: 429, count: 2, retryAfterS: 1 } });
  const q = await fetch(`${f.baseUrl}/users/alice/overall_quotas`, { headers });
  assert.equal(q.status, 200, "paths defaults to 'feed'");
  const a = await ask(f, START);
  assert.equal(a.headers.get('retry-after'), '1');
  assert.deepEqual(await errorOf(a), { status: 429, code: 'QuotaExceededError' });
  assert.deepEqual(await errorOf(await ask(f, START)), { status: 429, code: 'TooManyRequestsError' });
  assert.equal((await ask(f, START)).status, 302);

  f.setFaults({ burst: { status: 503, count: 1, paths: 'all' } });
  const t = await fetch(`${f.baseUrl}/users/alice/overall_quotas`, { headers });
  assert.equal(t.headers.get('retry-after'), null);
  assert.deepEqual(await errorOf(t), { status: 503, code: 'TransientError' });
  f.setFaults({ burst: { status: 504, count: 1 } });
  assert.deepEqual(await errorOf(await ask(f, START)), { status: 504, code: 'DeadlineExceededError' });
  assert.equal((await ask(f, START)).status, 302);
  // the 401 comes first: a burst is not consumed by unauthenticated requests
  f.setFaults({ burst: { status: 429, count: 1 } });
  assert.equal((await ask(f, START, {})).status, 401);
  assert.equal((await ask(f, START)).status, 429);
  assert.throws(() => f.setFaults({ burst: { status: 500 as 503, count: 1 } }), RangeError);
});

test('a truncated download advertises the full length, sends part of it and resets the connection', async () => {
  const m = addMinutes(START, 1);
  const size = fileOf(m).length;
  const f = await fake({ faults: { truncate: { minutes: [m], times: 1, atFraction: 0.5 } } });
  assert.ok((await download(f, START)).bytes.equals(fileOf(START)), 'other minutes are untouched');
  const api = await ask(f, m);
  const res = await fetch(api.headers.get('location')!);
  assert.equal(Number(res.headers.get('content-length')), size);
  let got = 0;
  let failed = false;
  try {
    for await (const chunk of res.body!) got += (chunk as Uint8Array).length;
  } catch {
    failed = true;
  }
  assert.ok(failed || got < size, `client saw ${got}/${size} bytes without an error`);
  assert.ok(got <= Math.floor(size / 2));
  // times: 1 → the next download of that minute is whole
  assert.ok((await download(f, m)).bytes.equals(fileOf(m)));
  assert.equal(f.faults.truncate?.times, 0);
});

test('resetBeforeHeaders destroys the next feed requests before any response', async () => {
  const f = await fake({ faults: { resetBeforeHeaders: 1 } });
  await assert.rejects(ask(f, START));
  assert.equal(f.requests[0]?.status, 0);
  assert.equal((await ask(f, START)).status, 302);
});

test('a slow body takes at least size / bytesPerSecond; a minute not listed is not slowed', async () => {
  const other = addMinutes(START, 1);
  const [size, otherSize] = [fileOf(START).length, fileOf(other).length];
  const bytesPerSecond = Math.ceil(Math.min(size, otherSize) / 2); // each minute would take 2 s or more, slowed
  const f = await fake({ faults: { slowBody: { bytesPerSecond, minutes: [START] } } });
  const timed = async (minute: string): Promise<number> => {
    const t0 = Date.now();
    const { bytes } = await download(f, minute);
    assert.ok(bytes.equals(fileOf(minute)), minute);
    return Date.now() - t0;
  };
  const took = await timed(START);
  assert.ok(took >= (size / bytesPerSecond) * 1000 - 100, `took ${took} ms for ${size} B at ${bytesPerSecond} B/s`);
  // the least the same rate would have taken: a bound the rate sets, not the machine's speed
  const otherTook = await timed(other);
  assert.ok(otherTook < (otherSize / bytesPerSecond) * 1000 - 100, `a minute not listed took ${otherTook} ms: slowed too`);
});

test("hourly: built on the fly as a tar.bz2 of the hour's minute files, cached; a stored package is served as is", async () => {
  const f = await fake();
  const { res, bytes } = await download(f, HOUR);
  assert.equal(res.status, 200);
  assert.equal(Number(res.headers.get('content-length')), bytes.length);
  const pkg = join(dir, 'hour.tar.bz2');
  writeFileSync(pkg, bytes);
  const names = execFileSync('tar', ['-tjf', pkg], { encoding: 'utf8' }).trim().split('\n');
  assert.deepEqual(
    names,
    manifest.files.map((x) => x.file),
  );
  for (const file of manifest.files) {
    const inner = execFileSync('tar', ['-xOjf', pkg, file.file]);
    assert.ok(inner.equals(readFileSync(join(feedDir, file.file))), `${file.file} is verbatim in the package`);
  }
  assert.ok((await download(f, HOUR)).bytes.equals(bytes), 'cached package served again');
  assert.equal(f.requests.filter((r) => r.path.startsWith('/api/v3/feeds/file_behaviours/hourly/')).length, 2);
  assert.deepEqual(await errorOf(await ask(f, '2026110101')), { status: 404, code: 'NotFoundError' });

  const storedDir = join(dir, 'stored');
  const stored = Buffer.from('not really a tarball');
  execFileSync('mkdir', ['-p', storedDir]);
  writeFileSync(join(storedDir, '2026110205.tar.bz2'), stored);
  const g = await fake({ feedDir: storedDir });
  assert.ok((await download(g, '2026110205')).bytes.equals(stored));
});

test('npm run fake-gti (test/support/fakeGtiMain.ts) serves a feed directory until SIGTERM', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/fakeGtiMain.ts', '--feed-dir', feedDir, '--api-key', KEY], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        out += d;
        if (out.includes('\n')) resolve(out.trim());
      });
      void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    assert.match(baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/api\/v3$/);
    const r = await fetch(`${baseUrl}/feeds/file_behaviours/${START}`, { headers });
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(fileOf(START)), 'fetch follows the 302 to the bytes');
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, stderr);
  const help = execFileSync(process.execPath, ['--import', 'tsx', 'test/support/fakeGtiMain.ts', '--help'], { encoding: 'utf8' });
  assert.match(help, /--not-available-lag-minutes/);
});
