/**
 * The "backfill (CLI)" phase: the command users run, as they run it, start-up and teardown
 * included: `node dist/src/cli/run.js backfill --source dir:<feed> --store sqlite:<file> --json`.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/index.js';
import type { BackfillSummary } from '../src/runner/index.js';
import { openStore } from '../src/store/index.js';
import type { FeedManifest } from '../src/synth/index.js';
import { BenchFailure, throwIfAborted } from './failure.js';
import { compareIds, diffIds, type IdCheck } from './ids.js';
import { elasticsearchFigures, type BenchElasticsearch, type ElasticsearchFigures } from './elasticsearch.js';
import type { PhaseResult } from './inproc.js';
import { childCpuSeconds, TreeSampler } from './procs.js';
import { dropPrefix } from './util.js';
import { workerEnv } from './workers.js';

/** Inputs of the backfill phase. */
export interface BackfillCliOptions {
  root: string;
  outDir: string;
  feedDir: string;
  manifest: FeedManifest;
  /** Passed through as REDIS_URL (with a queue prefix of this run's own); undefined: the CLI starts its private redis-server. */
  redisUrl: string | undefined;
  keep: boolean;
  /** Backfill into this Elasticsearch (an index prefix of the run's own) instead of a SQLite file. */
  elasticsearch?: BenchElasticsearch;
  signal?: AbortSignal;
  say(msg: string): void;
}

/** The phase's figures plus what the verification needs. */
export interface BackfillCliResult extends PhaseResult {
  command: string;
  /** Exit status, or the signal that ended it. */
  exitCode: number | null;
  exitSignal: string | null;
  /** The CLI's --json summary (undefined when it printed none). */
  summary: BackfillSummary | undefined;
  stored: number;
  expected: number;
  ids: IdCheck;
  /** CPU seconds of the CLI process and every child it reaped (decoders, redis-server). */
  cpuSeconds: number;
  /** CPU seconds of the Elasticsearch node's JVM over the same run, when the bench started the node. */
  nodeCpuSeconds?: number;
  redis: 'private redis-server (started by the CLI)' | 'REDIS_URL';
  dbPath: string;
  /** The store's size once written: the SQLite file (main + WAL), or Elasticsearch's primary store. */
  storeBytes: number;
  /** Elasticsearch's figures when the phase wrote there. */
  elasticsearch?: ElasticsearchFigures;
}

/** SIGTERM asks the CLI to drain; a second one forces it; then the whole process group is killed. */
const GRACE_MS = 10_000;

/**
 * Runs the compiled CLI once over the whole feed into a fresh SQLite file and times it from spawn
 * to exit. The CLI gets its own process group, so a given-up run takes its redis-server and
 * decoders with it. Peak RSS is sampled every 50 ms over the CLI and its children (redis-server,
 * lbzip2): exact up to the last 50 ms of each process's life.
 */
export async function measureBackfillCli(o: BackfillCliOptions): Promise<BackfillCliResult> {
  const es = o.elasticsearch;
  const dbPath = es ? es.url : join(o.outDir, 'backfill.db');
  const dbFiles = ['', '-wal', '-shm', '-journal'].map((s) => dbPath + s);
  if (!es) for (const f of dbFiles) rmSync(f, { force: true });
  const prefix = o.redisUrl ? `bench-cli-${process.pid}-${Date.now().toString(36)}` : undefined;
  // Defaults only, as a user's shell would have: no stray SANDTRAIL_* of ours changes what is measured.
  const env = workerEnv({
    ...(o.redisUrl && prefix ? { REDIS_URL: o.redisUrl, SANDTRAIL_QUEUE_PREFIX: prefix } : {}),
    ...(es ? { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: es.prefix } : {}),
  });
  const storeSpec = es ? `es:${es.url}` : `sqlite:${dbPath}`;
  const args = ['dist/src/cli/run.js', 'backfill', '--source', `dir:${resolve(o.feedDir)}`, '--store', storeSpec, '--json'];
  const command = `node ${args.join(' ')}`;
  const logPath = join(o.outDir, es ? 'backfill-es-cli.log' : 'backfill-cli.log');
  const sampler = new TreeSampler(50);
  const cpu0 = childCpuSeconds();
  const node0 = es?.cpuSeconds();
  const fd = openSync(logPath, 'w');
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: o.root, env, stdio: ['ignore', 'pipe', fd], detached: true });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new BenchFailure('phase backfill: could not spawn the CLI');
  sampler.name(pid, 'backfill-cli');
  sampler.start();
  let exited = false;
  const killGroup = (sig: NodeJS.Signals): void => {
    try {
      if (!exited) process.kill(-pid, sig);
    } catch {
      // already gone
    }
  };
  const hardKill = (): void => killGroup('SIGKILL');
  process.once('exit', hardKill);
  const onAbort = (): void => {
    killGroup('SIGTERM');
    void sleep(GRACE_MS / 2, undefined, { ref: false }).then(() => killGroup('SIGTERM'));
    void sleep(GRACE_MS, undefined, { ref: false }).then(hardKill);
  };
  o.signal?.addEventListener('abort', onAbort, { once: true });
  let out = '';
  child.stdout?.on('data', (b: Buffer) => (out += b.toString()));
  const [exitCode, exitSignal] = await new Promise<[number | null, string | null]>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, sig) => resolve([code, sig]));
  }).finally(() => {
    exited = true;
    o.signal?.removeEventListener('abort', onAbort);
    process.off('exit', hardKill);
  });
  const seconds = (performance.now() - t0) / 1000;
  // Only the CLI and its children (redis-server, decoders), not the bench's own tsx helper.
  const peaks = sampler.stop().filter((p) => p.role === 'backfill-cli' || p.role.endsWith('(backfill-cli)'));
  const cpuSeconds = childCpuSeconds() - cpu0;
  const node1 = es?.cpuSeconds();
  const nodeCpuSeconds = node0 !== undefined && node1 !== undefined ? node1 - node0 : undefined;
  try {
    throwIfAborted(o.signal, 'backfill');
    let summary: BackfillSummary | undefined;
    try {
      summary = JSON.parse(out.trim().split('\n').pop() ?? '') as BackfillSummary;
    } catch {
      summary = undefined;
    }
    if (exitCode !== 0 && !summary) {
      throw new BenchFailure(
        `phase backfill: \`${command}\` exited ${exitCode ?? exitSignal} without a summary; log tail:\n${tail(logPath)}`,
      );
    }
    // refreshed first: what the backfill wrote is then what counts and reads see
    const figures = es ? await elasticsearchFigures(es) : undefined;
    const minutes = o.manifest.files.map((f) => f.minute);
    const config = loadConfig({ env: { SANDTRAIL_STORE: storeSpec, ...(es ? { SANDTRAIL_ELASTICSEARCH_INDEX_PREFIX: es.prefix } : {}) } });
    const store = openStore(config.store, config);
    let entries;
    let stored;
    try {
      entries = await store.batches.get(minutes);
      stored = await store.sink.count();
    } finally {
      await store.close();
    }
    const ids = figures ? diffIds(figures.ids, o.manifest.expectedIds) : compareIds(dbPath, o.manifest.expectedIds);
    const storeBytes = figures ? figures.primaryBytesMerged : ['', '-wal'].reduce((a, x) => a + fileSize(dbPath + x), 0);
    return {
      phase: 'backfill',
      lines: entries.reduce((a, e) => a + e.lines, 0),
      ok: summary?.records.indexed ?? 0,
      bytes: entries.reduce((a, e) => a + e.bytesDecoded, 0),
      seconds,
      peaks,
      command,
      exitCode,
      exitSignal,
      summary,
      stored,
      expected: o.manifest.expectedIds.length,
      ids,
      cpuSeconds,
      ...(nodeCpuSeconds !== undefined ? { nodeCpuSeconds } : {}),
      redis: o.redisUrl ? 'REDIS_URL' : 'private redis-server (started by the CLI)',
      dbPath,
      storeBytes,
      ...(figures ? { elasticsearch: { ...figures, ids: [] } } : {}),
    };
  } finally {
    if (o.redisUrl && prefix) {
      const conn = new Redis(o.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
      conn.on('error', () => undefined);
      await dropPrefix(conn, prefix, o.say);
      conn.disconnect();
    }
    if (es) {
      if (!o.keep) await es.drop();
    } else if (!o.keep) for (const f of dbFiles) rmSync(f, { force: true });
  }
}

function tail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') || `(${path} is empty)`;
  } catch {
    return '(no log)';
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
