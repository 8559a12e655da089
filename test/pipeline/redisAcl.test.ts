import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from 'vitest';
import { writeFeed, type FeedManifest } from '../../src/synth/index.js';
import { baseEnv, builtCli, runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { RedisServer } from '../support/redisServer.js';
import { storeContents } from '../support/storeContents.js';

const PREFIX = 'st-acl';
/** The grant the docs give: sandtrail's keys and BullMQ's commands (INFO is one of Redis's "dangerous" ones). */
const GRANT = [`~${PREFIX}:*`, '&*', '+@all', '-@dangerous', '+info'];
const user = (name: string, ...rules: string[]): string[] => ['--user', name, 'on', '>s3cret', ...rules];

let redis: RedisServer;
let dir: string;
let manifest: FeedManifest;
beforeAll(async () => {
  redis = await RedisServer.start({
    aof: false,
    args: [
      ...user('sandtrail', ...GRANT),
      ...user('noinfo', `~${PREFIX}:*`, '&*', '+@all', '-@dangerous'),
      ...user('otherkeys', '~other:*', '&*', '+@all', '-@dangerous', '+info'),
      ...user('revoked', ...GRANT),
      // rights BullMQ needs, taken away one family at a time
      ...user('nostream', ...GRANT, '-@stream'),
      ...user('noset', ...GRANT, '-set'),
      ...user('noblock', ...GRANT, '-@blocking'),
    ],
  });
  dir = tempDir();
  manifest = await writeFeed({ out: join(dir, 'feed'), seed: 'acl', start: '202611040000', minutes: 3, perMinute: 30 });
});
afterAll(() => redis?.stop());

const urlOf = (name: string): string => `redis://${name}:s3cret@127.0.0.1:${redis.port}`;
const envOf = (name: string, store: string): NodeJS.ProcessEnv => ({
  REDIS_URL: urlOf(name),
  SANDTRAIL_QUEUE_PREFIX: PREFIX,
  SANDTRAIL_STORE: store,
});

test('as an ACL user limited to the queue prefix (and BullMQ commands), a backfill stores the feed exactly', async () => {
  const file = join(dir, 'ok.db');
  const r = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`, '--json'], { env: envOf('sandtrail', `sqlite:${file}`) });
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout) as { batches: Record<string, number> };
  assert.deepEqual(summary.batches, { ok: 3, empty: 0, missing: 0, failed: 0, pending: 0 });
  assert.deepEqual(storeContents(file).ids, manifest.expectedIds);
});

for (const [name, what] of [
  ['noinfo', 'may not run INFO'],
  ['otherkeys', `may not run scripts on keys under its prefix`],
  ['nostream', "may not run BullMQ's commands"],
  ['noset', "may not run BullMQ's commands"],
  ['noblock', 'may not run blocking commands'],
] as const)
  test(`an ACL user that ${what} ("${name}"): backfill and a worker end at start-up with one line naming the grant`, async () => {
    const started = Date.now();
    const r = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`], { env: envOf(name, `sqlite:${join(dir, `${name}.db`)}`) });
    assert.equal(r.code, 1);
    assert.ok(Date.now() - started < 20_000, 'at start-up, not after retries');
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0] as string, new RegExp(what));
    assert.ok((lines[0] as string).includes(`ACL SETUSER ${name} ~${PREFIX}:* &* +@all -@dangerous +info`), lines[0]);
    assert.ok(!r.stderr.includes('s3cret'), 'the password is never shown');

    // the commands that read Redis say the same, instead of ioredis's warning and a raw NOPERM
    for (const args of [['status'], ['ledger']]) {
      const c = await runCli(args, { env: envOf(name, `sqlite:${join(dir, 'ok.db')}`) });
      assert.equal(c.code, 1, `${args.join(' ')}: ${c.stderr}`);
      assert.match(c.stderr, new RegExp(`${what}.*ACL SETUSER ${name} ~${PREFIX}:\\*`), args.join(' '));
      assert.doesNotMatch(c.stderr, /Skipping the ready check/);
    }

    // a fleet worker says the same and exits, instead of retrying inside BullMQ
    const worker = indexWorker(name);
    const { code, err } = await worker.done;
    assert.equal(code, 1, err);
    assert.match(err, /REDIS_FORBIDDEN/);
    assert.match(err, new RegExp(what));
  });

test("doctor checks the Redis user's rights: pass for the granted user, fail with the grant for one without INFO", async () => {
  const store = `sqlite:${join(dir, 'doctor.db')}`;
  const rights = async (name: string): Promise<{ status: string; detail: string; fix?: string }> => {
    const r = await runCli(['doctor', '--json'], { env: envOf(name, store) });
    const report = JSON.parse(r.stdout) as { checks: { id: string; status: string; detail: string; fix?: string }[] };
    const c = report.checks.find((x) => x.id === 'redis.rights');
    assert.ok(c, r.stdout);
    return c;
  };
  assert.equal((await rights('sandtrail')).status, 'pass');
  const bad = await rights('noinfo');
  assert.equal(bad.status, 'fail');
  assert.match(bad.detail, /may not run INFO/);
  assert.match(bad.fix ?? '', new RegExp(`ACL SETUSER <user> ~${PREFIX}:\\*`));
});

test('a worker whose rights are taken away while it runs stops within seconds with REDIS_FORBIDDEN, instead of retrying every 100 ms', async () => {
  const worker = indexWorker('revoked');
  // running: past its start-up check, its BullMQ worker waiting for jobs
  for (let i = 0; i < 200 && !worker.stderr().includes('worker started'); i++) await new Promise((r) => setTimeout(r, 50));
  assert.match(worker.stderr(), /worker started/);
  const revoked = Date.now();
  const r = spawnSync('redis-cli', ['-p', String(redis.port), 'ACL', 'SETUSER', 'revoked', 'resetkeys', '~nothing:*'], {
    encoding: 'utf8',
  });
  assert.equal(r.stdout.trim(), 'OK');
  const { code, err } = await worker.done;
  assert.equal(code, 1, err);
  assert.ok(Date.now() - revoked < 15_000);
  assert.match(err, /REDIS_FORBIDDEN/);
  assert.ok(err.split('\n').filter((l) => l.includes('NOPERM')).length <= 3, 'a few lines, not one every 100 ms');
});

/** `sandtrail worker index` as `name`, killed after 20 s if it has not ended by itself. */
function indexWorker(name: string): { child: ChildProcess; stderr(): string; done: Promise<{ code: number | null; err: string }> } {
  const child = spawn(process.execPath, [builtCli(), 'worker', 'index'], {
    env: { ...baseEnv(), SANDTRAIL_LOG_LEVEL: 'info', ...envOf(name, `sqlite:${join(dir, `${name}-worker.db`)}`) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (err += s));
  const done = new Promise<{ code: number | null; err: string }>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('exit', (c) => (clearTimeout(timer), resolve({ code: c, err })));
  });
  return { child, stderr: () => err, done };
}
