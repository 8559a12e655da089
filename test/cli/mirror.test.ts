import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { writeFeed } from '../../src/synth/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCli, startCli } from '../support/cli.js';
import { accountApi } from '../support/apiAccounting.js';
import { tempDir, testRedisUrl, uniquePrefix, cleanup } from '../support/env.js';
import { startFakeGti } from '../support/fakeGti.js';
import { addMinutes } from '../../src/minute/index.js';

const KEY = 'mirror-key-5150';
const start = '202611060000';

test('mirror archives raw batches verbatim, survives a cut download, skips complete files on re-run, and the archive ingests', async () => {
  const dir = tempDir();
  const manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 13,
    start,
    minutes: 5,
    perMinute: 10,
    malformedRate: 0,
    missingMinutes: [addMinutes(start, 3)],
  });
  const fake = await startFakeGti({ apiKey: KEY, feedDir: join(dir, 'feed') });
  cleanup(() => fake.close());
  fake.setFaults({ truncate: { minutes: [addMinutes(start, 1)], times: 1, atFraction: 0.4 } });
  const out = join(dir, 'archive');
  const env = { GTI_APIKEY: KEY, GTI_BASE_URL: fake.baseUrl, REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix() };
  accountApi(fake, { redisUrl: env.REDIS_URL, queuePrefix: env.SANDTRAIL_QUEUE_PREFIX });
  const args = ['mirror', '--from', start, '--to', addMinutes(start, 4), '--out', out, '--json'];
  const first = await runCli(args, { env });
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(JSON.parse(first.stdout), { downloaded: 4, skipped: 0, missing: 1, not_available: 0, failed: 0, interrupted: false });
  for (const f of manifest.files)
    assert.ok(readFileSync(join(out, `${f.minute}.jsonl.bz2`)).equals(readFileSync(join(dir, 'feed', f.file))), f.minute);
  assert.deepEqual(
    readdirSync(out).filter((n) => n.endsWith('.part')),
    [],
  );

  const again = await runCli(args, { env });
  // an --out that cannot be a directory: a usage error naming it, before any request
  const file = join(dir, 'a-file');
  writeFileSync(file, 'x');
  for (const [out, why] of [
    [file, /it is a file, not a directory/],
    ['/proc/sandtrail-mirror', /cannot be the mirror's directory/],
  ] as const) {
    const bad = await runCli(['mirror', '--from', start, '--to', start, '--out', out], { env });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, why);
  }
  assert.deepEqual(JSON.parse(again.stdout), { downloaded: 0, skipped: 4, missing: 1, not_available: 0, failed: 0, interrupted: false });

  const sink = `sqlite:${join(dir, 'm.db')}`;
  const bf = await runCli(['backfill', '--source', `dir:${out}`, '--from', start, '--to', addMinutes(start, 4), '--json'], {
    env: { ...env, SANDTRAIL_STORE: sink },
  });
  assert.deepEqual(JSON.parse(bf.stdout).batches, { ok: 4, empty: 0, missing: 1, failed: 0, pending: 0 });
  assert.equal(JSON.parse(bf.stdout).records.indexed, manifest.records);
});

test('mirror keeps only downloads that decode whole: a CRC error, a chunked body cut short, are fetched again; never kept broken', async () => {
  const dir = tempDir();
  const manifest = await writeFeed({ out: join(dir, 'feed'), seed: 15, start, minutes: 3, perMinute: 10, malformedRate: 0 });
  const fake = await startFakeGti({ apiKey: KEY, feedDir: join(dir, 'feed') });
  cleanup(() => fake.close());
  fake.setFaults({
    corruptTimes: { [addMinutes(start, 0)]: 2 },
    chunkedDownloads: true,
    truncate: { minutes: [addMinutes(start, 2)], times: 1, atFraction: 0.5 },
  });
  const out = join(dir, 'archive');
  const env = { GTI_APIKEY: KEY, GTI_BASE_URL: fake.baseUrl, REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix() };
  accountApi(fake, { redisUrl: env.REDIS_URL, queuePrefix: env.SANDTRAIL_QUEUE_PREFIX });
  const r = await runCli(['mirror', '--from', start, '--to', addMinutes(start, 2), '--out', out, '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { downloaded: 3, skipped: 0, missing: 0, not_available: 0, failed: 0, interrupted: false });
  for (const f of manifest.files)
    assert.ok(readFileSync(join(out, `${f.minute}.jsonl.bz2`)).equals(readFileSync(join(dir, 'feed', f.file))), f.minute);
  const downloads = (m: string): number => fake.requests.filter((q) => q.path === `/download/minute/${m}`).length;
  assert.deepEqual([downloads(addMinutes(start, 0)), downloads(addMinutes(start, 1)), downloads(addMinutes(start, 2))], [3, 1, 2]);
}, 90_000);

/** A feed of `minutes` served by a fake GTI API, and the environment of a mirror of it with fast retries (plus `env`). */
async function mirrorRig(seed: number, minutes: number, perMinute: number, env: Record<string, string> = {}) {
  const dir = tempDir();
  const manifest = await writeFeed({ out: join(dir, 'feed'), seed, start, minutes, perMinute, malformedRate: 0 });
  const fake = await startFakeGti({ apiKey: KEY, feedDir: join(dir, 'feed') });
  cleanup(() => fake.close());
  const all = {
    GTI_APIKEY: KEY,
    GTI_BASE_URL: fake.baseUrl,
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_FEED_BACKOFF_MS: '20',
    ...env,
  };
  accountApi(fake, { redisUrl: all.REDIS_URL, queuePrefix: all.SANDTRAIL_QUEUE_PREFIX });
  return { dir, manifest, fake, env: all, out: join(dir, 'archive') };
}

test('a storage host refusing the link of a minute is asked again through the API; a minute it always refuses fails alone, named in the log, and the run goes on', async () => {
  const { dir, manifest, fake, env, out } = await mirrorRig(17, 3, 5);
  fake.setFaults({ storageForbiddenTimes: { [addMinutes(start, 0)]: 1, [addMinutes(start, 1)]: 100 } });
  const r = await runCli(['mirror', '--from', start, '--to', addMinutes(start, 2), '--out', out, '--json'], { env });
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { downloaded: 2, skipped: 0, missing: 0, not_available: 0, failed: 1, interrupted: false });
  const failed = r.stderr.split('\n').filter((l) => l.includes('mirror: minute failed'));
  assert.equal(failed.length, 1, r.stderr);
  assert.match(
    failed[0] as string,
    /"minute":"202611..0001".*GTI_TRANSIENT: download of \/feeds\/file_behaviours\/\d{12}: the storage host refused the link the API gave \(403\)/,
  );
  assert.doesNotMatch(r.stderr, /Warning:/);
  for (const f of [manifest.files[0], manifest.files[2]])
    assert.ok(readFileSync(join(out, `${f!.minute}.jsonl.bz2`)).equals(readFileSync(join(dir, 'feed', f!.file))));
  const downloads = (m: string): number => fake.requests.filter((q) => q.path === `/download/minute/${m}`).length;
  assert.deepEqual([downloads(addMinutes(start, 0)), downloads(addMinutes(start, 1)), downloads(addMinutes(start, 2))], [2, 5, 1]);
}, 90_000);

test('the API rate limit spends no try of mirror: a burst of 429s longer than its tries still downloads every minute', async () => {
  const { dir, manifest, fake, env, out } = await mirrorRig(18, 2, 4, {
    SANDTRAIL_FEED_RATE_LIMIT_DELAY_MS: '20',
    SANDTRAIL_GTI_MAX_RETRIES: '0',
  });
  fake.setFaults({ burst: { status: 429, count: 7, paths: 'feed' } });
  const r = await runCli(['mirror', '--from', start, '--to', addMinutes(start, 1), '--out', out, '--json'], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { downloaded: 2, skipped: 0, missing: 0, not_available: 0, failed: 0, interrupted: false });
  assert.equal(fake.requests.filter((q) => q.status === 429).length, 7);
  for (const f of manifest.files)
    assert.ok(readFileSync(join(out, `${f.minute}.jsonl.bz2`)).equals(readFileSync(join(dir, 'feed', f.file))));
}, 90_000);

test('mirror stopped by SIGINT drops the download under way, prints what it did and exits 130; a re-run completes the range', async () => {
  const dir = tempDir();
  const manifest = await writeFeed({ out: join(dir, 'feed'), seed: 16, start, minutes: 3, perMinute: 40, malformedRate: 0 });
  const slow = addMinutes(start, 1);
  let reached: () => void = () => undefined;
  const slowStarted = new Promise<void>((resolve) => (reached = resolve));
  const fake = await startFakeGti({
    apiKey: KEY,
    feedDir: join(dir, 'feed'),
    onRequest: (q) => {
      if (q.path === `/download/minute/${slow}`) reached();
    },
  });
  cleanup(() => fake.close());
  fake.setFaults({ slowBody: { bytesPerSecond: 2000, minutes: [slow] } });
  const out = join(dir, 'archive');
  const env = { GTI_APIKEY: KEY, GTI_BASE_URL: fake.baseUrl, REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix() };
  accountApi(fake, { redisUrl: env.REDIS_URL, queuePrefix: env.SANDTRAIL_QUEUE_PREFIX });
  const args = ['mirror', '--from', start, '--to', addMinutes(start, 2), '--out', out, '--json'];
  const { child, exited } = startCli(args, env);
  await slowStarted;
  await sleep(300);
  child.kill('SIGINT');
  const r = await exited;
  assert.equal(r.code, 130, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { downloaded: 1, skipped: 0, missing: 0, not_available: 0, failed: 0, interrupted: true });
  assert.match(r.stderr, /stopping: the download under way is dropped/);
  assert.deepEqual(readdirSync(out), [`${start}.jsonl.bz2`], 'no .part left');

  fake.setFaults({ slowBody: undefined });
  const again = await runCli(args, { env });
  assert.deepEqual(JSON.parse(again.stdout), { downloaded: 2, skipped: 1, missing: 0, not_available: 0, failed: 0, interrupted: false });
  for (const f of manifest.files)
    assert.ok(readFileSync(join(out, `${f.minute}.jsonl.bz2`)).equals(readFileSync(join(dir, 'feed', f.file))), f.minute);
}, 90_000);

test('refused GTI credentials end a command with one line, the stage’s, naming the fix and never the key', async () => {
  const dir = tempDir();
  await writeFeed({ out: join(dir, 'feed'), seed: 14, start, minutes: 1, perMinute: 2, malformedRate: 0 });
  const fake = await startFakeGti({ apiKey: KEY, feedDir: join(dir, 'feed') });
  cleanup(() => fake.close());
  const env = {
    GTI_APIKEY: 'wrong-key-0042',
    GTI_BASE_URL: fake.baseUrl,
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
  };
  accountApi(fake, { redisUrl: env.REDIS_URL, queuePrefix: env.SANDTRAIL_QUEUE_PREFIX });
  const r = await runCli(['backfill', '--source', 'api', '--from', start, '--to', start, '--store', `sqlite:${join(dir, 's.db')}`], {
    env,
  });
  assert.equal(r.code, 1, r.stderr);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0] as string, /"code":"GTI_AUTH".*401 WrongCredentialsError.*fix GTI_APIKEY/);
  assert.doesNotMatch(r.stderr, /wrong-key-0042/);

  // with --json, a script reads the same failure on stdout, as JSON
  for (const args of [
    ['backfill', '--source', 'api', '--from', start, '--to', start, '--json'],
    ['lookup', 'a'.repeat(64), '--json'],
    ['mirror', '--from', start, '--to', start, '--out', join(dir, 'out'), '--json'],
  ]) {
    const j = await runCli([...args, '--store', `sqlite:${join(dir, 's.db')}`], { env });
    assert.equal(j.code, 1, j.stderr);
    const out = JSON.parse(j.stdout) as { error: { code: string; message: string; exit: number } };
    assert.equal(out.error.code, 'GTI_AUTH', `${args[0]}: ${j.stdout}`);
    assert.match(out.error.message, /401 WrongCredentialsError.*GTI_APIKEY/);
    assert.equal(out.error.exit, 1);
    assert.doesNotMatch(j.stdout + j.stderr, /wrong-key-0042/);
  }
});
