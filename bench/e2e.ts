/** The end-to-end phase: feed files → feed worker → Redis → index worker → SQLite. */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { loadConfig } from '../src/config/index.js';
import { createQueues, runBackfill, type BackfillSummary, type Queues } from '../src/queue/index.js';
import { ensureRedis, type RedisHandle } from '../src/redis/index.js';
import { openStore, type Store } from '../src/store/index.js';
import type { FeedManifest } from '../src/synth/index.js';
import type { PhaseResult } from './inproc.js';
import { readCpu, TreeSampler, type CpuTimes } from './procs.js';
import { spawnWorker, workerEnv, type WorkerChild } from './workers.js';

/** Inputs of the end-to-end phase. */
export interface E2eOptions {
  root: string;
  outDir: string;
  feedDir: string;
  manifest: FeedManifest;
  feedConcurrency: number;
  indexConcurrency: number;
  keep: boolean;
  say(msg: string): void;
}

/** The phase's figures plus what only this phase has. */
export interface E2eResult extends PhaseResult {
  summary: BackfillSummary;
  /** Rows in the behaviours table, and whether they are exactly the manifest's expectedIds. */
  stored: number;
  expected: number;
  idsMatch: boolean;
  /** From the batch log: first batch start to last batch end, and the sum of batch durations. */
  feedStageSeconds: number;
  feedBusySeconds: number;
  /** CPU seconds over the whole phase, per process (children = reaped decoder processes). */
  cpu: Record<string, CpuTimes>;
  dbPath: string;
}

/**
 * Starts a private redis-server and the two worker processes, waits until both have registered
 * with their queue (so start-up is not timed), then times runBackfill from enqueue until every
 * feed and index job has finished. Throws when a worker dies or the store is incomplete.
 */
export async function measureEndToEnd(o: E2eOptions): Promise<E2eResult> {
  const dbPath = join(o.outDir, 'e2e.db');
  const dbFiles = ['', '-wal', '-shm', '-journal'].map((s) => dbPath + s);
  for (const f of dbFiles) rmSync(f, { force: true });
  const minutes = o.manifest.files.map((f) => f.minute);

  let redis: RedisHandle | undefined;
  let store: Store | undefined;
  let queues: Queues | undefined;
  const workers: WorkerChild[] = [];
  const sampler = new TreeSampler();
  try {
    redis = await ensureRedis({});
    const env = workerEnv({
      SANDTRAIL_REDIS_URL: redis.url,
      SANDTRAIL_QUEUE_PREFIX: 'bench',
      SANDTRAIL_SINK: `sqlite:${dbPath}`,
      SANDTRAIL_LOG_LEVEL: 'warn',
      SANDTRAIL_FEED_CONCURRENCY: String(o.feedConcurrency),
      SANDTRAIL_INDEX_CONCURRENCY: String(o.indexConcurrency),
    });
    // The same settings the workers read, so queue options and the prefix agree.
    const config = loadConfig({ env });
    // Opened before the workers start, so the file already has WAL mode and its schema and neither
    // worker's start-up waits on the other's first-time setup lock.
    store = openStore(config.sink, config);
    queues = createQueues(redis.url, config);
    const redisPid = Number(/process_id:(\d+)/.exec(await queues.connection.info('server'))?.[1] ?? 0);
    if (redisPid) sampler.name(redisPid, 'redis-server');

    for (const kind of ['feed', 'index'] as const) {
      const w = spawnWorker(kind, o.root, env, join(o.outDir, `${kind}-worker.log`));
      workers.push(w);
      sampler.name(w.pid, `${kind}-worker`);
    }
    await waitForWorkers(queues, workers);
    o.say(`workers ready (feed pid ${workers[0]?.pid}, index pid ${workers[1]?.pid}); backfilling ${minutes.length} batches...`);

    const abort = new AbortController();
    for (const w of workers) void w.exited.then(() => abort.abort());
    const cpuStart = new Map(workers.map((w) => [w.kind, readCpu(w.pid)]));
    const redisCpuStart = redisPid ? readCpu(redisPid) : undefined;
    sampler.start();
    const cpuBefore = process.cpuUsage();
    const t0 = performance.now();
    const summary = await runBackfill({
      queues,
      store,
      sourceSpec: `dir:${resolve(o.feedDir)}`,
      minutes,
      pollMs: 100,
      signal: abort.signal,
      onProgress: (p) => progress(p.batchesDone, p.batchesTotal, p.chunksDone, p.chunksKnown),
    });
    const seconds = (performance.now() - t0) / 1000;
    if (process.stderr.isTTY) process.stderr.write('\n');
    const dead = workers.find((w) => w.exit);
    if (dead) throw new Error(`${dead.kind} worker exited during the run (${JSON.stringify(dead.exit)}); log tail:\n${dead.tail()}`);

    // VmHWM and CPU are read just before the workers stop: afterwards /proc no longer has them.
    sampler.sample();
    const cpu: Record<string, CpuTimes> = {};
    for (const w of workers) cpu[`${w.kind}-worker`] = delta(readCpu(w.pid), cpuStart.get(w.kind));
    if (redisPid) cpu['redis-server'] = delta(readCpu(redisPid), redisCpuStart);
    const own = process.cpuUsage(cpuBefore);
    cpu.bench = { self: (own.user + own.system) / 1e6, children: 0 };
    const peaks = sampler.stop();
    await Promise.all(workers.map((w) => w.stop()));

    const entries = await store.batches.get(minutes);
    const starts = entries.map((e) => e.startedAt);
    const ends = entries.map((e) => e.finishedAt);
    const stored = await store.sink.count();
    const idsMatch = sameIds(dbPath, o.manifest.expectedIds);
    return {
      phase: 'e2e',
      lines: entries.reduce((a, e) => a + e.lines, 0),
      ok: summary.records.indexed,
      bytes: entries.reduce((a, e) => a + e.bytesDecoded, 0),
      seconds,
      peaks,
      summary,
      stored,
      expected: o.manifest.expectedIds.length,
      idsMatch,
      feedStageSeconds: entries.length ? (Math.max(...ends) - Math.min(...starts)) / 1000 : 0,
      feedBusySeconds: entries.reduce((a, e) => a + (e.finishedAt - e.startedAt), 0) / 1000,
      cpu,
      dbPath,
    };
  } finally {
    sampler.stop();
    await Promise.all(workers.map((w) => w.stop(5000)));
    await queues?.close();
    await store?.close();
    await redis?.stop();
    if (!o.keep) for (const f of dbFiles) rmSync(f, { force: true });
  }
}

/** Waits until each queue has a worker connected, failing fast if a worker process dies first. */
async function waitForWorkers(queues: Queues, workers: WorkerChild[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const dead = workers.find((w) => w.exit);
    if (dead) throw new Error(`${dead.kind} worker exited at start-up (${JSON.stringify(dead.exit)}); log tail:\n${dead.tail()}`);
    const [f, i] = await Promise.all([queues.feed.getWorkersCount(), queues.index.getWorkersCount()]);
    if (f > 0 && i > 0) return;
    if (Date.now() > deadline) throw new Error(`workers did not register within ${timeoutMs / 1000} s (feed ${f}, index ${i})`);
    await sleep(100);
  }
}

/** True when the behaviours table holds exactly `expected` (sorted) ids, nothing more or less. */
function sameIds(dbPath: string, expected: readonly string[]): boolean {
  const db = new BetterSqlite3(dbPath, { readonly: true });
  try {
    const ids = (db.prepare('SELECT id FROM behaviours').pluck().all() as string[]).sort();
    return ids.length === expected.length && ids.every((id, i) => id === expected[i]);
  } finally {
    db.close();
  }
}

function delta(now: CpuTimes | undefined, before: CpuTimes | undefined): CpuTimes {
  return { self: (now?.self ?? 0) - (before?.self ?? 0), children: (now?.children ?? 0) - (before?.children ?? 0) };
}

let lastProgress = 0;
function progress(done: number, total: number, chunksDone: number, chunksKnown: number): void {
  // One line rewritten in place, at most twice a second; nothing at all when stderr is not a terminal.
  if (!process.stderr.isTTY || Date.now() - lastProgress < 500) return;
  lastProgress = Date.now();
  process.stderr.write(`\r  batches ${done}/${total}, index chunks ${chunksDone}/${chunksKnown}   `);
}
