import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { test } from 'vitest';
import { writeFeed } from '../../src/synth/index.js';
import { baseEnv, builtCli } from '../support/cli.js';
import { cleanup, tempDir, uniquePrefix } from '../support/env.js';
import { RedisServer } from '../support/redisServer.js';

/** A private mount namespace, where a worker can see an empty directory over the feed (root on Linux). */
const canUnshare = spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs tmpfs /mnt && umount /mnt'], { stdio: 'ignore' }).status === 0;

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(cmd, args, { env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (err += s));
  cleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'close');
    }
  });
  return { child, out: () => out, err: () => err };
}

test.skipIf(!canUnshare)(
  `a fleet feed worker that finds the feed directory empty (a volume not mounted on its machine) fails the minutes the backfill saw, instead of "missing" and exit 0${
    canUnshare ? '' : ' (skipped: unshare -m cannot mount a tmpfs here: it needs root and mount namespaces)'
  }`,
  async () => {
    const dir = tempDir();
    const feed = join(dir, 'feed');
    await writeFeed({ out: feed, seed: 3, start: '202611050000', minutes: 3, perMinute: 10, malformedRate: 0 });
    const redis = await RedisServer.start({ aof: false });
    cleanup(() => redis.stop());
    const cli = builtCli();
    const env = { REDIS_URL: redis.url, SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_STORE: `sqlite:${join(dir, 's.db')}` };
    // the feed worker's machine: the same path, nothing mounted there
    start('unshare', ['-m', 'sh', '-c', `mount -t tmpfs tmpfs "${feed}" && exec "${process.execPath}" ${cli} worker feed`], env);
    start(process.execPath, [cli, 'worker', 'index'], env);
    const b = start(process.execPath, [cli, 'backfill', '--source', `dir:${feed}`, '--no-workers', '--json'], env);
    const [code] = (await once(b.child, 'exit')) as [number | null];
    assert.equal(code, 1, b.err());
    const summary = JSON.parse(b.out()) as { batches: Record<string, number>; failures: { batch: string; reason: string }[] };
    assert.deepEqual(summary.batches, { ok: 0, empty: 0, missing: 0, failed: 3, pending: 0 });
    for (const f of summary.failures) assert.match(f.reason, /^SOURCE_NOT_FOUND: a feed worker found no batch file for this minute/);
    // the batch log says so too: a status read later does not call the minutes missing
    const status = spawnSync(process.execPath, [cli, 'status', '--json'], { env: { ...baseEnv(), ...env }, encoding: 'utf8' });
    const recent = (JSON.parse(status.stdout) as { recent_batches: { status: string; error: string | null }[] }).recent_batches;
    assert.deepEqual(
      recent.map((r) => r.status),
      ['failed', 'failed', 'failed'],
      status.stdout,
    );
    assert.match(recent[0]?.error ?? '', /SOURCE_NOT_FOUND/);
  },
  120_000,
);

test('backfill --no-workers with no fleet worker running says so in the log, again and again, instead of waiting without a word', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  await writeFeed({ out: feed, seed: 4, start: '202611050000', minutes: 2, perMinute: 5, malformedRate: 0 });
  const redis = await RedisServer.start({ aof: false });
  cleanup(() => redis.stop());
  const env = {
    REDIS_URL: redis.url,
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_STORE: `sqlite:${join(dir, 's.db')}`,
    SANDTRAIL_WORKER_IDLE_WARN_MS: '400',
  };
  const b = start(process.execPath, [builtCli(), 'backfill', '--source', `dir:${feed}`, '--no-workers', '--json'], env);
  for (let i = 0; i < 200 && (b.err().match(/no job finished/g) ?? []).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
  b.child.kill('SIGINT');
  await once(b.child, 'exit');
  const warnings = b
    .err()
    .split('\n')
    .filter((l) => l.includes('no job finished'));
  assert.ok(warnings.length >= 2, b.err());
  const first = JSON.parse(warnings[0] as string) as { batchesDone: number; batchesTotal: number; msg: string };
  assert.deepEqual([first.batchesDone, first.batchesTotal], [0, 2]);
  assert.match(first.msg, /fleet workers \(worker feed, worker index\) on this Redis and queue prefix/);
}, 60_000);
