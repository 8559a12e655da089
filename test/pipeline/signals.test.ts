import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { minuteRange } from '../../src/minute/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { baseEnv, builtCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';
import { RedisServer } from '../support/redisServer.js';

function cli(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; out: () => string; err: () => string } {
  const child = spawn(process.execPath, [builtCli(), ...args], {
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (err += s));
  return { child, out: () => out, err: () => err };
}

/** Exit code of the child (null when a signal ended it); fails after 60 s instead of hanging. */
const exited = (c: ChildProcess): Promise<number | null> =>
  c.exitCode !== null || c.signalCode !== null
    ? Promise.resolve(c.exitCode)
    : Promise.race([
        new Promise<number | null>((r) => c.once('exit', (code) => r(code))),
        sleep(60_000).then(() => {
          c.kill('SIGKILL');
          throw new Error('the process did not exit within 60 s of the signal');
        }),
      ]);

const jsonLines = (text: string): void => {
  for (const l of text.split('\n').filter((x) => x.trim() !== '')) assert.doesNotThrow(() => JSON.parse(l), `not one JSON object: ${l}`);
};

/** A stage worker on its own store and queue prefix, once it has logged that it started (at most 60 s). */
async function startedWorker(kind: 'feed' | 'index', redisUrl: string): Promise<ReturnType<typeof cli>> {
  const w = cli(['worker', kind], {
    REDIS_URL: redisUrl,
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_STORE: `sqlite:${join(tempDir(), 'w.db')}`,
    SANDTRAIL_LOG_LEVEL: 'info',
  });
  for (let i = 0; i < 2400 && !w.err().includes('worker started'); i++) await sleep(25);
  return w;
}

test('a worker whose Redis is gone logs one JSON line per event, and a SIGTERM still ends it', async () => {
  const redis = await RedisServer.start({ aof: false });
  try {
    const w = await startedWorker('feed', redis.url);
    assert.match(w.err(), /worker started/);
    await redis.kill();
    await sleep(2500);
    const t0 = Date.now();
    w.child.kill('SIGTERM');
    const code = await exited(w.child);
    assert.ok(Date.now() - t0 < 10_000, `stopped in ${Date.now() - t0} ms`);
    assert.equal(code, 130, 'a stop that could not drain exits non-zero');
    jsonLines(w.err());
    const lostLines = w
      .err()
      .split('\n')
      .filter((l) => l.includes('lost Redis') || l.includes('queue connection error'));
    assert.ok(
      lostLines.length >= 1 && lostLines.length <= 4,
      `the outage is logged once per connection, not per retry (${lostLines.length})`,
    );
    assert.match(w.err(), /stopping without draining/);
  } finally {
    await redis.stop();
  }
});

test('a library warning (BullMQ on an evicting Redis) is one JSON line of the worker log, said once', async () => {
  const redis = await RedisServer.start({ aof: false, args: ['--maxmemory-policy', 'allkeys-lru'] });
  try {
    const w = await startedWorker('index', redis.url);
    await sleep(500);
    w.child.kill('SIGTERM');
    await exited(w.child);
    jsonLines(w.err());
    const eviction = w
      .err()
      .split('\n')
      .filter((l) => l.includes('Eviction policy is allkeys-lru'));
    assert.equal(eviction.length, 1, w.err());
    assert.equal((JSON.parse(eviction[0] as string) as { level: number }).level, 40);
  } finally {
    await redis.stop();
  }
});

test('SIGINT during a backfill stops after the active jobs, prints the summary of the store they leave (unfinished minutes pending), exits 130 and removes its private Redis', async () => {
  const dir = tempDir();
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  const minutes = 30;
  await writeFeed({ out: join(dir, 'feed'), seed: 9, start: '202611040000', minutes, perMinute: 40, malformedRate: 0 });
  const b = cli(['backfill', '--source', `dir:${join(dir, 'feed')}`, '--json'], {
    TMPDIR: tmp,
    REDIS_URL: '',
    SANDTRAIL_STORE: `sqlite:${join(dir, 'b.db')}`,
    SANDTRAIL_LOG_LEVEL: 'info',
    SANDTRAIL_INDEX_CHUNK_MAX_DOCS: '5',
    SANDTRAIL_INDEX_HIGH_WATER_CHUNKS: '2',
  });
  for (let i = 0; i < 2400 && !b.err().includes('batch done'); i++) await sleep(25);
  assert.match(b.err(), /batch done/, 'the backfill was under way when interrupted');
  b.child.kill('SIGINT');
  const code = await exited(b.child).catch((e: Error) => {
    throw new Error(`${e.message}; its log: ${b.err().slice(-3000)}`);
  });
  assert.equal(code, 130, b.err());
  const summary = JSON.parse(b.out()) as { interrupted: boolean; batches: Record<string, number>; failures: { batch: string }[] };
  assert.equal(summary.interrupted, true);
  const { ok, pending, failed } = summary.batches as { ok: number; pending: number; failed: number };
  assert.equal(failed, 0);
  assert.ok(pending > 0 && ok + pending === minutes, `ok ${ok} + unfinished ${pending} = ${minutes}`);
  // the summary is the store's once the active minutes are finished, not the one at the signal
  const store = openStore(`sqlite:${join(dir, 'b.db')}`);
  try {
    const rows = await store.batches.get([...minuteRange('202611040000', '202611040029')]);
    assert.equal(rows.filter((r) => r.status === 'ok').length, ok, JSON.stringify(summary));
    const done = new Set(rows.filter((r) => r.status === 'ok').map((r) => r.batch));
    assert.deepEqual(
      summary.failures.filter((f) => done.has(f.batch)),
      [],
      'no minute the store holds whole is reported unfinished',
    );
  } finally {
    await store.close();
  }
  jsonLines(b.err());
  assert.deepEqual(
    readdirSync(tmp).filter((n) => n.startsWith('sandtrail-redis-')),
    [],
  );
});

test('a second SIGTERM leaves the active index job to its lock expiry: no attempt spent, no failure recorded, and another worker stores its minute', async () => {
  const redisUrl = await testRedisUrl();
  const dir = tempDir();
  const prefix = uniquePrefix();
  const storeFile = join(dir, 's.db');
  const feed = join(dir, 'feed');
  await writeFeed({ out: feed, seed: 3, start: '202611050000', minutes: 1, perMinute: 10, malformedRate: 0 });
  await openStore(`sqlite:${storeFile}`).close();
  const env = {
    REDIS_URL: redisUrl,
    SANDTRAIL_QUEUE_PREFIX: prefix,
    SANDTRAIL_STORE: `sqlite:${storeFile}`,
    SANDTRAIL_LOG_LEVEL: 'info',
    // the index job waits on the store's write lock, which the test holds
    SANDTRAIL_SQLITE_BUSY_TIMEOUT_MS: '60000',
    SANDTRAIL_WORKER_LOCK_DURATION_MS: '3000',
    SANDTRAIL_WORKER_STALLED_INTERVAL_MS: '1000',
  };
  const lock = new BetterSqlite3(storeFile);
  const redis = new Redis(redisUrl);
  const started: ReturnType<typeof cli>[] = [];
  try {
    const index = cli(['worker', 'index'], env);
    started.push(index, cli(['worker', 'feed'], env));
    // the worker has its store open: from now on its index job waits on the lock the test holds
    for (let i = 0; i < 2400 && !index.err().includes('worker started'); i++) await sleep(25);
    assert.match(index.err(), /worker started/);
    lock.exec('BEGIN IMMEDIATE');
    const backfill = cli(['backfill', '--source', `dir:${feed}`, '--no-workers', '--json'], env);
    let active: string[] = [];
    for (let i = 0; i < 2400 && active.length === 0; i++) {
      await sleep(25);
      active = await redis.lrange(`${prefix}:index:active`, 0, -1);
    }
    assert.equal(active.length, 1, index.err());
    index.child.kill('SIGTERM');
    await sleep(500);
    index.child.kill('SIGTERM');
    const t0 = Date.now();
    assert.equal(await exited(index.child), 130, index.err());
    // the bound is the feature (a second signal does not wait for the drain): generous on a loaded machine
    assert.ok(Date.now() - t0 < 15_000, `the forced stop took ${Date.now() - t0} ms`);
    const job = await redis.hgetall(`${prefix}:index:${active[0]}`);
    assert.equal(job.failedReason, undefined, JSON.stringify(job));
    assert.ok(!job.atm || job.atm === '0', `attempts made: ${job.atm}`);
    assert.doesNotMatch(index.err(), /index job failed/);
    // the store is free again, and another worker takes the job once its lock has expired
    lock.exec('ROLLBACK');
    started.push(cli(['worker', 'index'], env));
    assert.equal(await exited(backfill.child), 0, backfill.err());
    const summary = JSON.parse(backfill.out()) as { batches: { ok: number; failed: number } };
    assert.deepEqual([summary.batches.ok, summary.batches.failed], [1, 0]);
    const store = openStore(`sqlite:${storeFile}`, {}, { readOnly: true });
    try {
      assert.equal(await store.sink.count(), 10);
    } finally {
      await store.close();
    }
  } finally {
    if (lock.inTransaction) lock.exec('ROLLBACK');
    lock.close();
    for (const w of started) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    redis.disconnect();
  }
});
