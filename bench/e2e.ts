/** The end-to-end phase: feed files → feed worker processes → Redis → index worker processes → SQLite. */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/index.js';
import { createQueues, type Queues } from '../src/queue/index.js';
import { runBackfill, type BackfillSummary } from '../src/runner/index.js';
import { ensureRedis, type RedisHandle } from '../src/redis/index.js';
import { openStore, type Store } from '../src/store/index.js';
import type { FeedManifest } from '../src/synth/index.js';
import { BenchFailure, reasonOf, throwIfAborted } from './failure.js';
import { compareIds, type IdCheck } from './ids.js';
import type { AcceptedSizes, PhaseResult } from './inproc.js';
import { readCpu, readStatus, TreeSampler, type CpuTimes } from './procs.js';
import { RedisMemorySampler, type RedisMemoryFigures } from './redisMem.js';
import { aborted, dropPrefix } from './util.js';
import { spawnWorker, workerEnv, type WorkerChild } from './workers.js';

/** Inputs of the end-to-end phase. */
export interface E2eOptions {
  root: string;
  outDir: string;
  feedDir: string;
  manifest: FeedManifest;
  feedConcurrency: number;
  indexConcurrency: number;
  /** Worker processes per stage. */
  feedWorkers: number;
  indexWorkers: number;
  /** The normalize phase's accepted line sizes, for the Redis memory figures. */
  accepted: AcceptedSizes | undefined;
  keep: boolean;
  /** A Redis to use (REDIS_URL) under a queue prefix of this run's own; undefined: a private redis-server. */
  redisUrl: string | undefined;
  /** Aborted when the run is given up (time limit, SIGINT): the phase then throws a BenchFailure. */
  signal?: AbortSignal;
  say(msg: string): void;
}

/** The phase's figures plus what only this phase has. */
export interface E2eResult extends PhaseResult {
  summary: BackfillSummary;
  /** Rows in the behaviours table, and whether they are exactly the manifest's expectedIds. */
  stored: number;
  expected: number;
  idsMatch: boolean;
  ids: IdCheck;
  /** Which Redis the queues used. */
  redis: 'private redis-server' | 'REDIS_URL';
  /** From the batch log: first batch start to last batch end, and the sum of batch durations. */
  feedStageSeconds: number;
  feedBusySeconds: number;
  /** CPU seconds over the whole phase, per process (children = reaped decoder processes). */
  cpu: Record<string, CpuTimes>;
  /** Redis memory against the raw bytes of the records waiting in the index queue. */
  redisMemory: RedisMemoryFigures;
  dbPath: string;
}

/**
 * Starts a private redis-server (or uses `redisUrl`) and the worker processes, waits until
 * all have registered with their queue (so start-up is not timed), then times runBackfill from
 * enqueue until every feed and index job has finished. Throws a BenchFailure when the phase cannot
 * complete: a worker or the private redis-server dies, or `signal` is aborted. What was stored is
 * returned for the caller to verify (`stored`, `ids`), not judged here.
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
  /** Set when REDIS_URL's Redis is used: the keys to delete afterwards. */
  let sharedPrefix: string | undefined;
  let redisWatch: NodeJS.Timeout | undefined;
  let redisMem: RedisMemorySampler | undefined;
  try {
    redis = await ensureRedis(o.redisUrl ? { url: o.redisUrl } : {});
    // A shared Redis may hold other pipelines' queues and an earlier bench's leftovers: a prefix of our own.
    const prefix = redis.isPrivate ? 'bench' : `bench-${process.pid}-${Date.now().toString(36)}`;
    if (!redis.isPrivate) sharedPrefix = prefix;
    const env = workerEnv({
      SANDTRAIL_REDIS_URL: redis.url,
      SANDTRAIL_QUEUE_PREFIX: prefix,
      SANDTRAIL_STORE: `sqlite:${dbPath}`,
      SANDTRAIL_LOG_LEVEL: 'warn',
      SANDTRAIL_FEED_CONCURRENCY: String(o.feedConcurrency),
      SANDTRAIL_INDEX_CONCURRENCY: String(o.indexConcurrency),
    });
    // The same settings the workers read, so queue options and the prefix agree.
    const config = loadConfig({ env });
    // Opened before the workers start, so the file already has WAL mode and its schema and neither
    // worker's start-up waits on the other's first-time setup lock.
    store = openStore(config.store, config);
    queues = createQueues(redis.url, config);
    // Only our own child's pid means anything here: a shared Redis's process_id may be another host's.
    const redisPid = redis.isPrivate ? Number(/process_id:(\d+)/.exec(await queues.connection.info('server'))?.[1] ?? 0) : 0;
    if (redisPid) sampler.name(redisPid, 'redis-server');

    // A command to a Redis that is gone waits for it forever (runBackfill waits through outages on
    // purpose): whatever means the phase can no longer finish aborts it, with the reason as its failure.
    const abort = new AbortController();
    redisWatch = setInterval(() => {
      if (redisPid && !readStatus(redisPid)) abort.abort(new Error(`the private redis-server (pid ${redisPid}) exited`));
    }, 250);
    redisWatch.unref();
    const signal = o.signal ? AbortSignal.any([abort.signal, o.signal]) : abort.signal;

    for (const [kind, count] of [
      ['feed', o.feedWorkers],
      ['index', o.indexWorkers],
    ] as const) {
      for (let i = 1; i <= count; i++) {
        // one process per stage keeps the plain role name (and JSON key) of earlier reports
        const name = count === 1 ? `${kind}-worker` : `${kind}-worker-${i}`;
        const w = spawnWorker(kind, o.root, env, join(o.outDir, `${name}.log`), name);
        workers.push(w);
        sampler.name(w.pid, name);
        void w.exited.then(() => abort.abort(new Error(`the ${w.name} exited (${JSON.stringify(w.exit)}); log tail:\n${w.tail()}`)));
      }
    }
    const ready = waitForWorkers(queues, workers, o.feedWorkers, o.indexWorkers, signal);
    ready.catch(() => undefined); // left behind when the signal wins; its own failure is rethrown below
    await Promise.race([ready, aborted(signal)]);
    throwIfAborted(signal, 'e2e');
    o.say(`workers ready (${workers.map((w) => `${w.name} pid ${w.pid}`).join(', ')}); backfilling ${minutes.length} batches...`);

    const cpuStart = new Map(workers.map((w) => [w.name, readCpu(w.pid)]));
    const lines = o.manifest.files.reduce((a, f) => a + f.lines, 0);
    redisMem = new RedisMemorySampler(queues, o.accepted, o.manifest.bytesUncompressed / Math.max(1, lines));
    await redisMem.start();
    const redisCpuStart = redisPid ? readCpu(redisPid) : undefined;
    sampler.start();
    const cpuBefore = process.cpuUsage();
    const t0 = performance.now();
    const backfill = runBackfill({
      queues,
      store,
      sourceSpec: `dir:${resolve(o.feedDir)}`,
      minutes,
      pollMs: 100,
      signal,
      onProgress: (p) => progress(p.batchesDone, p.batchesTotal, p.chunksDone, p.chunksKnown),
    });
    // runBackfill sees the signal only between polls, and a poll of a Redis that is gone waits for
    // it forever: the phase stops waiting on the signal itself and leaves that call behind.
    backfill.catch(() => undefined);
    let summary: BackfillSummary | undefined;
    try {
      summary = await Promise.race([backfill, aborted(signal)]);
    } finally {
      if (process.stderr.isTTY) process.stderr.write('\n');
    }
    const seconds = (performance.now() - t0) / 1000;
    if (signal.aborted || !summary || summary.interrupted) {
      throw new BenchFailure(`phase e2e did not complete: ${signal.aborted ? reasonOf(signal) : 'the backfill was interrupted'}`);
    }
    const dead = workers.find((w) => w.exit);
    if (dead)
      throw new BenchFailure(`phase e2e: the ${dead.name} exited during the run (${JSON.stringify(dead.exit)}); log tail:\n${dead.tail()}`);

    // VmHWM and CPU are read just before the workers stop: afterwards /proc no longer has them.
    sampler.sample();
    const cpu: Record<string, CpuTimes> = {};
    for (const w of workers) cpu[w.name] = delta(readCpu(w.pid), cpuStart.get(w.name));
    if (redisPid) cpu['redis-server'] = delta(readCpu(redisPid), redisCpuStart);
    const own = process.cpuUsage(cpuBefore);
    cpu.bench = { self: (own.user + own.system) / 1e6, children: 0 };
    const peaks = sampler.stop();
    const entries = await store.batches.get(minutes);
    const acceptedOk = entries.every((e) => (o.accepted?.get(e.batch)?.length ?? 0) - 1 === e.accepted);
    const redisMemory = await redisMem.stop(join(o.outDir, 'redis-memory.csv'), acceptedOk);
    await Promise.all(workers.map((w) => w.stop()));

    const starts = entries.map((e) => e.startedAt);
    const ends = entries.map((e) => e.finishedAt);
    const stored = await store.sink.count();
    const ids = compareIds(dbPath, o.manifest.expectedIds);
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
      idsMatch: ids.idsMatch,
      ids,
      redis: redis.isPrivate ? 'private redis-server' : 'REDIS_URL',
      feedStageSeconds: entries.length ? (Math.max(...ends) - Math.min(...starts)) / 1000 : 0,
      feedBusySeconds: entries.reduce((a, e) => a + (e.finishedAt - e.startedAt), 0) / 1000,
      cpu,
      cpuSeconds: Object.values(cpu).reduce((a, c) => a + c.self + c.children, 0),
      redisMemory,
      dbPath,
    };
  } finally {
    clearInterval(redisWatch);
    redisMem?.halt();
    sampler.stop();
    await Promise.all(workers.map((w) => w.stop(5000)));
    if (queues && sharedPrefix) await dropPrefix(queues.connection, sharedPrefix, o.say);
    await queues?.close();
    await store?.close();
    await redis?.stop();
    if (!o.keep) for (const f of dbFiles) rmSync(f, { force: true });
  }
}

/** Waits until each queue has its workers connected, failing fast if a worker process dies first. */
async function waitForWorkers(
  queues: Queues,
  workers: WorkerChild[],
  feedWorkers: number,
  indexWorkers: number,
  signal?: AbortSignal,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    throwIfAborted(signal, 'e2e');
    const dead = workers.find((w) => w.exit);
    if (dead) {
      throw new BenchFailure(`phase e2e: the ${dead.name} exited at start-up (${JSON.stringify(dead.exit)}); log tail:\n${dead.tail()}`);
    }
    const [f, i] = await Promise.all([queues.feed.getWorkersCount(), queues.index.getWorkersCount()]);
    if (f >= feedWorkers && i >= indexWorkers) return;
    if (Date.now() > deadline) {
      throw new BenchFailure(`phase e2e: the workers did not register within ${timeoutMs / 1000} s (feed ${f}, index ${i})`);
    }
    await sleep(100);
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
