import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { backfillExitCode, runBackfillCommand, type BackfillRun } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { addMinutes } from '../../src/minute/index.js';
import { createSource, processBatch } from '../../src/feed/index.js';
import { RedisChunkTransport, createQueues } from '../../src/queue/index.js';
import { openElasticsearchStore, openStore, setupElasticsearch } from '../../src/store/index.js';
import { type SinkDoc } from '../../src/wire/index.js';
import { writeFeed, type FeedManifest } from '../../src/synth/index.js';
import { baseEnv, builtCli } from '../support/cli.js';
import { damagePivotPages } from '../support/damageStore.js';
import { tempDir, testConfig } from '../support/env.js';
import { smallFilesystem } from '../support/smallFilesystem.js';
import { openRealStore, realCluster, realEsContents, type Reachable } from '../support/realElasticsearch.js';
import { storeContents } from '../support/storeContents.js';

/**
 * A store fault (a damaged file, a full disk, a read-only store, a cluster block, refused
 * credentials, a closed index) is the store's: the run ends non-zero with the cause and the store
 * named, the batch log marks the minutes failed where the store can still be written, no record is
 * dead-lettered for it, and a re-run once the fault is gone ends exact.
 */

const log = createLogger('silent');
const START = '202611070000';
const MINUTES = 4;

/** A feed with no updates and no malformed lines: every record is one stored behaviour. */
async function feed(dir: string, perMinute = 25, seed = 5): Promise<FeedManifest> {
  return writeFeed({
    out: join(dir, 'feed'),
    seed,
    start: START,
    minutes: MINUTES,
    perMinute,
    malformedRate: 0,
    bigRate: 0,
    variants: { update: 0 },
  });
}

function backfill(dir: string, config: Awaited<ReturnType<typeof testConfig>>): Promise<BackfillRun> {
  return runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: START, to: addMinutes(START, MINUTES - 1) }, { config, log });
}

/** Batch-log rows of a SQLite store, read straight from the file. */
function batchRows(file: string): { batch: string; status: string; error: string | null }[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare('SELECT batch, status, error FROM batches ORDER BY batch').all() as {
      batch: string;
      status: string;
      error: string | null;
    }[];
  } finally {
    db.close();
  }
}

test('a SQLite store with damaged pages fails the run naming the damage and the file; no valid record is dead-lettered; restored, a re-run is exact', async () => {
  const dir = tempDir();
  const manifest = await feed(dir);
  const file = join(dir, 'store.db');
  const config = await testConfig(dir, { index: { chunkMaxDocs: 10 } });
  const first = await backfill(dir, config);
  assert.equal(backfillExitCode(first), 0, JSON.stringify(first.summary.failures));
  const good = storeContents(file);
  assert.equal(good.ids.length, manifest.records);
  const backup = join(dir, 'backup.db');
  copyFileSync(file, backup);

  damagePivotPages(file);

  const damaged = await backfill(dir, config);
  assert.equal(backfillExitCode(damaged), 1);
  assert.ok(damaged.summary.batches.failed > 0, JSON.stringify(damaged.summary));
  assert.equal(damaged.summary.batches.ok + damaged.summary.batches.failed, MINUTES);
  for (const f of damaged.summary.failures) {
    assert.match(f.reason, /STORE_DAMAGED: the file is damaged: SQLite store/, f.reason);
    assert.ok(f.reason.includes(file), f.reason);
  }
  assert.equal(damaged.summary.records.rejected, 0, 'nothing is blamed on the records');
  // the dead letters and the batch log live on other pages: readable, and exact
  const after = new BetterSqlite3(file, { readonly: true });
  try {
    assert.equal((after.prepare('SELECT count(*) AS n FROM dead_letters').get() as { n: number }).n, 0, 'no record dead-lettered');
  } finally {
    after.close();
  }
  const failedRows = batchRows(file).filter((r) => r.status === 'failed');
  assert.deepEqual(
    failedRows.map((r) => r.batch),
    damaged.summary.failures.map((f) => f.batch),
    'the batch log marks the failed minutes',
  );
  for (const r of failedRows) assert.match(r.error ?? '', /STORE_DAMAGED/);

  // restored from the backup, the same run ends exact
  copyFileSync(backup, file);
  const again = await backfill(dir, config);
  assert.equal(backfillExitCode(again), 0, JSON.stringify(again.summary.failures));
  assert.deepEqual(storeContents(file), good);
  assert.deepEqual(
    batchRows(file).map((r) => r.status),
    Array(MINUTES).fill('ok'),
  );
});

const probeDir = tempDir();
const probe = smallFilesystem(probeDir, 1);
/** Said in the title of the tests that need a small filesystem, when they are skipped. */
const unmountable = typeof probe === 'string' ? ` [skipped: ${probe}]` : '';

test.skipIf(typeof probe === 'string')(
  `a full disk ends the run within seconds saying "disk full" and the file; failed minutes are marked failed; the summary counts only what is stored; with room again a re-run is exact${unmountable}`,
  async () => {
    const dir = tempDir();
    const manifest = await feed(dir, 90, 9);
    const fs = smallFilesystem(dir, 3);
    assert.ok(typeof fs !== 'string', String(fs));
    const file = join(fs.path, 'store.db');
    const config = await testConfig(dir, { store: `sqlite:${file}`, index: { chunkMaxDocs: 20 } });
    const started = Date.now();
    const full = await backfill(dir, config);
    const tookMs = Date.now() - started;
    assert.equal(backfillExitCode(full), 1);
    assert.ok(tookMs < 60_000, `ended in ${tookMs} ms`);
    assert.ok(full.summary.batches.failed > 0);
    const diskFull = full.summary.failures.filter((f) => /disk full/.test(f.reason));
    assert.ok(diskFull.length > 0, JSON.stringify(full.summary.failures));
    for (const f of diskFull) assert.ok(f.reason.includes(file), f.reason);
    const held = storeContents(file);
    assert.equal(held.dead.length, 0, 'no record dead-lettered for a full disk');
    assert.ok(full.summary.records.indexed <= held.ids.length, `summary ${full.summary.records.indexed}, store ${held.ids.length}`);
    assert.ok(full.summary.records.indexed < manifest.records);
    // every minute the run touched has its true status in the store's batch log
    const rows = new Map(batchRows(file).map((r) => [r.batch, r]));
    for (const f of full.summary.failures) {
      const row = rows.get(f.batch);
      if (row) assert.equal(row.status, 'failed', `${f.batch}: ${row.status}`);
    }
    assert.ok(
      [...rows.values()].some((r) => r.status === 'failed' && /disk full/.test(r.error ?? '')),
      'the batch log says disk full',
    );

    // a read on the full disk: SQLite cannot create the -shm file it reads a WAL store through
    rmSync(`${file}-shm`, { force: true });
    const filler = join(fs.path, 'filler');
    try {
      writeFileSync(filler, Buffer.alloc(8 << 20));
    } catch {
      // ENOSPC once the disk is full: what was written fills it
    }
    let readFault: unknown;
    try {
      const reader = openStore(`sqlite:${file}`, {}, { readOnly: true });
      await reader.hunt.top('behash', { limit: 1 }).finally(() => reader.close());
    } catch (err) {
      readFault = err;
    }
    assert.equal((readFault as { code?: string } | undefined)?.code, 'STORE_FULL', String(readFault));
    assert.match(String((readFault as Error).message), /disk full.*run the same command again/);
    rmSync(filler);

    fs.resize(64);
    const again = await backfill(dir, config);
    assert.equal(backfillExitCode(again), 0, JSON.stringify(again.summary.failures));
    assert.equal(again.summary.records.indexed, manifest.records);
    assert.deepEqual(storeContents(file).ids, [...manifest.expectedIds].sort());
    assert.deepEqual(
      batchRows(file).map((r) => r.status),
      Array(MINUTES).fill('ok'),
    );
  },
);

test.skipIf(typeof probe === 'string')(
  `a store on a read-only filesystem fails at once naming the file; mounted writable again, a re-run is exact${unmountable}`,
  async () => {
    const dir = tempDir();
    const manifest = await feed(dir, 10, 13);
    const fs = smallFilesystem(dir, 32);
    assert.ok(typeof fs !== 'string', String(fs));
    const file = join(fs.path, 'store.db');
    const config = await testConfig(dir, { store: `sqlite:${file}` });
    assert.equal(backfillExitCode(await backfill(dir, config)), 0);
    const before = storeContents(file);
    execFileSync('mount', ['-o', 'remount,ro', fs.path], { stdio: 'pipe' });
    // refused when opened (no -wal/-shm beside it) or at the first write (they are left by a reader)
    const outcome = await backfill(dir, config).then(
      (run) => {
        assert.equal(backfillExitCode(run), 1);
        assert.ok(run.summary.failures.length > 0);
        return run.summary.failures.map((x) => x.reason);
      },
      (err: Error & { code?: string }) => [`${err.code}: ${err.message}`],
    );
    for (const reason of outcome) {
      assert.match(reason, /^STORE_READONLY: /, reason);
      assert.ok(reason.includes(file), reason);
    }
    execFileSync('mount', ['-o', 'remount,rw', fs.path], { stdio: 'pipe' });
    assert.deepEqual(storeContents(file), before);
    // the jobs the stopped stage put aside on the same Redis do not hold the re-run back
    const t0 = Date.now();
    assert.equal(backfillExitCode(await backfill(dir, config)), 0);
    assert.ok(Date.now() - t0 < 30_000, `the re-run took ${Date.now() - t0} ms`);
    assert.equal(storeContents(file).ids.length, manifest.records);
  },
);

// Elasticsearch's store faults (a write block, a closed index, the flood-stage watermark, refused
// credentials and privileges, a node killed mid-run) are met on a real node of their own in
// elasticsearchFaults.test.ts.
const cluster = await realCluster();

test('a SQLite store another process keeps locked fails the run in bounded time with STORE_LOCKED naming the file; released, a re-run is exact', async () => {
  const dir = tempDir();
  const manifest = await feed(dir);
  const file = join(dir, 'store.db');
  const config = await testConfig(dir, { sqlite: { busyTimeoutMs: 300 } });
  // a store set up, then held by another connection's write transaction all along
  await openStore(config.store, config).close();
  const holder = new BetterSqlite3(file);
  holder.exec('BEGIN IMMEDIATE');
  const started = Date.now();
  let locked: BackfillRun;
  try {
    locked = await backfill(dir, config);
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
  assert.equal(backfillExitCode(locked), 1, JSON.stringify(locked.summary));
  assert.ok(Date.now() - started < 30_000, `ended in ${Date.now() - started} ms`);
  assert.ok(locked.summary.failures.length > 0);
  for (const f of locked.summary.failures) {
    assert.match(f.reason, /STORE_LOCKED: locked by another process/, f.reason);
    assert.ok(f.reason.includes(file), f.reason);
  }
  assert.equal(locked.summary.records.rejected, 0, 'nothing is blamed on the records');

  const again = await backfill(dir, config);
  assert.equal(backfillExitCode(again), 0, JSON.stringify(again.summary.failures));
  assert.equal(storeContents(file).ids.length, manifest.records);
});

test('a fleet index worker on a damaged store stops with the cause, keeps its jobs instead of failing the queue, and marks the chunk failed', async () => {
  const dir = tempDir();
  await feed(dir, 10, 31);
  const file = join(dir, 'store.db');
  const config = await testConfig(dir, { index: { chunkMaxDocs: 5 } });
  assert.equal(backfillExitCode(await backfill(dir, config)), 0);
  damagePivotPages(file);

  // the chunks of one minute queued again, as a fleet's feed worker would queue them
  const queues = createQueues(config.redisUrl as string, config);
  const emitter = new RedisChunkTransport(queues, config, log);
  const minute = START;
  const chunks: SinkDoc[][] = [];
  await processBatch({
    source: createSource(`dir:${join(dir, 'feed')}`),
    batch: minute,
    maxLineBytes: config.feed.maxLineBytes,
    prefixBytes: config.feed.dlqPrefixBytes,
    maxDepth: config.feed.maxDepth,
    maxBatchBytes: config.feed.maxBatchBytes,
    dlqMaxBatchBytes: config.feed.dlqMaxBatchBytes,
    chunkMaxDocs: 5,
    chunkMaxBytes: config.index.chunkMaxBytes,
    deadLetter: async () => undefined,
    emitChunk: async (_n, d) => void chunks.push([...d]),
  });
  for (const [n, d] of chunks.entries()) await emitter.emit(minute, n, d);
  const worker = spawn(process.execPath, [builtCli(), 'worker', 'index'], {
    env: {
      ...baseEnv(),
      SANDTRAIL_STORE: `sqlite:${file}`,
      REDIS_URL: config.redisUrl,
      SANDTRAIL_QUEUE_PREFIX: config.queuePrefix,
      SANDTRAIL_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  worker.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(
      () => (worker.kill('SIGKILL'), reject(new Error(`worker index did not stop: ${stderr.slice(-2000)}`))),
      60_000,
    );
    worker.once('exit', (c) => (clearTimeout(timer), resolve(c)));
  });
  try {
    assert.notEqual(code, 0);
    assert.match(stderr, /the file is damaged: SQLite store .*store\.db/);
    assert.match(stderr, /repair or restore the store; stopping/);
    assert.equal(stderr.split('\n').filter((l) => l.includes('"level":60')).length, 1, `one fatal line: ${stderr}`);
    const counts = await queues.index.getJobCounts('failed', 'delayed', 'waiting');
    assert.equal(counts.failed, 0, 'no job failed for the store');
    assert.equal((counts.delayed ?? 0) + (counts.waiting ?? 0), chunks.length, 'every chunk kept for a worker on a repaired store');
    const row = batchRows(file).find((r) => r.batch === minute);
    assert.equal(row?.status, 'failed');
    assert.match(row?.error ?? '', /^STORE_DAMAGED: /);
  } finally {
    await queues.close();
  }
});

test.skipIf('skip' in cluster)(
  'Elasticsearch (real cluster) with setup manual and no write alias: the run stops with "index missing" and the fix; after es setup a re-run is exact',
  async () => {
    const real = cluster as Reachable;
    const fixture = openRealStore(real);
    const admin = fixture.admin;
    try {
      const dir = tempDir();
      const manifest = await feed(dir, 8, 41);
      const prefix = fixture.prefix;
      const config = await testConfig(dir, { store: `es:${real.url}`, elasticsearch: { indexPrefix: prefix, setup: 'manual' } });
      const started = Date.now();
      const run = await backfill(dir, config);
      assert.equal(backfillExitCode(run), 1);
      assert.ok(Date.now() - started < 60_000, `ended in ${Date.now() - started} ms`);
      assert.ok(run.summary.failures.length > 0);
      for (const f of run.summary.failures)
        assert.match(f.reason, new RegExp(`^STORE_READONLY: index missing: .*${prefix}-behaviours.*run sandtrail es setup`));
      assert.equal(run.summary.records.rejected, 0);

      const es = openElasticsearchStore(`es:${real.url}`, { indexPrefix: prefix });
      try {
        await setupElasticsearch(es.client, { prefix });
        assert.equal(await es.dlq.count(), 0, 'no record dead-lettered');
        const again = await backfill(dir, config);
        assert.equal(backfillExitCode(again), 0, JSON.stringify(again.summary.failures));
        assert.deepEqual((await realEsContents(admin, prefix)).ids, [...manifest.expectedIds].sort());
      } finally {
        await es.close();
      }
    } finally {
      await fixture.close();
    }
  },
);

test('a SQLite store file removed or replaced while written: the write is STORE_DAMAGED naming the file, never a minute ok; a re-run is exact', async () => {
  const dir = tempDir();
  const file = join(dir, 'moved.db');
  // a store part's write, then the file removed (or another put in its place): the next write says so
  for (const change of ['removed', 'replaced'] as const) {
    for (const side of ['', '-wal', '-shm']) rmSync(`${file}${side}`, { force: true });
    const store = openStore(`sqlite:${file}`);
    try {
      const row = {
        batch: '202611070000',
        source: 'dir:x',
        status: 'ok' as const,
        lines: 0,
        accepted: 0,
        rejected: 0,
        chunks: 0,
        bytesDecoded: 0,
        error: null,
        startedAt: 1,
        finishedAt: 2,
      };
      await store.batches.record(row);
      for (const side of ['', '-wal', '-shm']) rmSync(`${file}${side}`, { force: true });
      if (change === 'replaced') await openStore(`sqlite:${file}`).close();
      await assert.rejects(store.batches.record({ ...row, batch: '202611070001' }), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'STORE_DAMAGED');
        assert.ok(err.message.includes(`${file} was ${change} while this process wrote to it`), err.message);
        return true;
      });
    } finally {
      await store.close();
    }
  }

  // a backfill whose store file is removed mid-run ends 1 with the cause, not every minute ok
  const manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 9,
    start: START,
    minutes: 40,
    perMinute: 60,
    malformedRate: 0,
    bigRate: 0,
  });
  const config = await testConfig(dir, { store: `sqlite:${file}` });
  rmSync(file, { force: true });
  const run = runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: START, to: addMinutes(START, 39) }, { config, log });
  for (let i = 0; i < 1000; i++) {
    // (a file just made has no tables yet)
    const rows = existsSync(file)
      ? (() => {
          try {
            return batchRows(file).filter((r) => r.status === 'ok').length;
          } catch {
            return 0;
          }
        })()
      : 0;
    if (rows > 0) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  for (const side of ['', '-wal', '-shm']) rmSync(`${file}${side}`, { force: true });
  const broken = await run;
  assert.equal(backfillExitCode(broken), 1, JSON.stringify(broken.summary.batches));
  assert.ok(broken.summary.batches.ok < 40, JSON.stringify(broken.summary.batches));
  assert.match(broken.summary.failures[0]?.reason ?? '', /STORE_DAMAGED: .* was removed while this process wrote to it/);
  const again = await runBackfillCommand({ source: `dir:${join(dir, 'feed')}`, from: START, to: addMinutes(START, 39) }, { config, log });
  assert.equal(backfillExitCode(again), 0, JSON.stringify(again.summary.failures));
  assert.deepEqual(storeContents(file).ids, manifest.expectedIds);
}, 180_000);
