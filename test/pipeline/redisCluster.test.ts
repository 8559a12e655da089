import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, test } from 'vitest';
import { runBackfillCommand } from '../../src/cli/index.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { addMinutes, msToMinute } from '../../src/minute/index.js';
import { writeFeed, type FeedManifest } from '../../src/synth/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { baseEnv, builtWorker, runCli } from '../support/cli.js';
import { cleanup, tempDir } from '../support/env.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';
import { RedisCluster } from '../support/redisCluster.js';
import { RedisServer } from '../support/redisServer.js';
import { expectedDead, storeContents, storedCount } from '../support/storeContents.js';

// Every process kind against a 3-master Redis Cluster, as an ACL user limited to sandtrail's keys:
// the prefix becomes a hash tag ({st-cl-…}), so BullMQ's scripts and transactions stay in one slot.
const PASSWORD = 's3cret';
const GRANT = ['~{st-cl-*}:*', '&*', '+@all', '-@dangerous', '+info'];
const START = '202611060000';
const MINUTES = 6;

let cluster: RedisCluster;
let dir: string;
let manifest: FeedManifest;
beforeAll(async () => {
  cluster = await RedisCluster.start({ aof: true, args: ['--user', 'sandtrail', 'on', `>${PASSWORD}`, ...GRANT] });
  dir = tempDir();
  manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 'cluster',
    start: START,
    minutes: MINUTES,
    perMinute: 60,
    malformedRate: 0.03,
  });
});
afterAll(() => cluster?.stop());

const redisUrl = (): string => cluster.url(`sandtrail:${PASSWORD}`);
const envOf = (prefix: string, file: string): NodeJS.ProcessEnv => ({
  REDIS_URL: redisUrl(),
  SANDTRAIL_QUEUE_PREFIX: prefix,
  SANDTRAIL_STORE: `sqlite:${file}`,
});

function assertExact(file: string): void {
  const c = storeContents(file);
  assert.deepEqual(c.ids, manifest.expectedIds, 'exactly the feed ids');
  assert.deepEqual(c.dead, expectedDead(manifest), 'exactly the malformed lines dead-lettered');
}

test('backfill on the cluster stores the feed exactly, every key under the hash-tagged prefix in one slot', async () => {
  const file = join(dir, 'a.db');
  const r = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`, '--json'], { env: envOf('st-cl-a', file) });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual((JSON.parse(r.stdout) as { batches: unknown }).batches, { ok: MINUTES, empty: 0, missing: 0, failed: 0, pending: 0 });
  assertExact(file);
  const perNode = cluster.keysPerNode('*');
  assert.ok(perNode.flat().length > 0);
  assert.deepEqual(
    perNode.flat().filter((k) => !k.startsWith('{st-cl-a}:')),
    [],
    'every key sandtrail wrote is under its prefix',
  );
  assert.equal(perNode.filter((keys) => keys.length > 0).length, 1, "the prefix's keys are in one slot, so on one master");
});

test('a fleet on the cluster: backfill --no-workers, feed and index worker processes (one SIGKILLed mid-run), status; exact store, clean SIGTERM', async () => {
  const file = join(dir, 'b.db');
  const env = {
    ...envOf('st-cl-b', file),
    SANDTRAIL_LOG_LEVEL: 'warn',
    SANDTRAIL_WORKER_LOCK_DURATION_MS: '3000',
    SANDTRAIL_WORKER_STALLED_INTERVAL_MS: '1000',
    SANDTRAIL_INDEX_CHUNK_MAX_DOCS: '10',
    SANDTRAIL_INDEX_HIGH_WATER_CHUNKS: '3',
  };
  const feed = startWorker('feed', env);
  let index = startWorker('index', env);
  const run = runCli(['backfill', '--no-workers', '--source', `dir:${join(dir, 'feed')}`, '--json'], { env });
  for (let i = 0; i < 1200 && storedCount(file) < manifest.expectedIds.length / 3; i++) await sleep(25);
  const midway = storedCount(file);
  assert.ok(midway > 0 && midway < manifest.expectedIds.length, `killed mid-run (${midway} of ${manifest.expectedIds.length})`);
  index.child.kill('SIGKILL');
  assert.equal((await index.exit).signal, 'SIGKILL');
  index = startWorker('index', env);
  const r = await run;
  assert.equal(r.code, 0, `${r.stderr}\n${feed.log()}\n${index.log()}`);
  assert.deepEqual((JSON.parse(r.stdout) as { batches: unknown }).batches, { ok: MINUTES, empty: 0, missing: 0, failed: 0, pending: 0 });
  assertExact(file);

  const status = await runCli(['status', '--json'], { env });
  assert.equal(status.code, 0, status.stderr);
  const s = JSON.parse(status.stdout) as { queues: { feed: { completed: number; failed: number }; index: { waiting: number } } };
  assert.ok(s.queues.feed.completed >= MINUTES, status.stdout);
  assert.equal(s.queues.index.waiting, 0);

  feed.child.kill('SIGTERM');
  index.child.kill('SIGTERM');
  assert.deepEqual(await feed.exit, { code: 0, signal: null }, feed.log());
  assert.deepEqual(await index.exit, { code: 0, signal: null }, index.log());
});

test('the master holding the queues killed -9 and restarted (AOF) mid-backfill: the run finishes with nothing lost', async () => {
  const file = join(dir, 'c.db');
  const config = loadConfig({
    flags: {
      redisUrl: redisUrl(),
      queuePrefix: 'st-cl-c',
      store: `sqlite:${file}`,
      logLevel: 'silent',
      feed: { backoffMs: 100 },
      index: { chunkMaxDocs: 10, highWaterChunks: 2, backoffMs: 50 },
      worker: { lockDurationMs: 3000, stalledIntervalMs: 1000 },
    },
  });
  assert.equal(config.redisCluster, true, 'a list of URLs means a cluster');
  assert.equal(config.queuePrefix, '{st-cl-c}');
  const run = runBackfillCommand(
    { source: `dir:${join(dir, 'feed')}`, from: START, to: manifest.files[MINUTES - 1]?.minute },
    { config, log: createLogger('silent') },
  );
  for (let i = 0; i < 400 && storedCount(file) < manifest.expectedIds.length / 5; i++) await sleep(25);
  const holder = cluster.nodes[cluster.keysPerNode('{st-cl-c}:*').findIndex((keys) => keys.length > 0)];
  assert.ok(holder, 'one master holds the queues');
  await holder.kill();
  await sleep(300);
  await holder.restart();
  await cluster.waitServing();
  const { summary } = await run;
  assert.deepEqual(summary.batches, { ok: MINUTES, empty: 0, missing: 0, failed: 0, pending: 0 });
  assertExact(file);
});

test('the master holding the queues down for seconds: an idle worker says so once per connection, not once per retry', async () => {
  const file = join(dir, 'o.db');
  // an idle worker whose master failed over can take the whole drain to stop (its close hangs):
  // bounded here at 15 s, as an operator's worker.drainTimeoutMs bounds it (300 s by default)
  const env = { ...envOf('st-cl-o', file), SANDTRAIL_LOG_LEVEL: 'warn', SANDTRAIL_WORKER_DRAIN_TIMEOUT_MS: '15000' };
  const index = startWorker('index', env);
  const feed = startWorker('feed', env);
  // bounded, with the workers' logs: a hang here has been seen under load, and must say where it was
  const logs = (): string => `index worker:\n${index.log().slice(-3000)}\nfeed worker:\n${feed.log().slice(-3000)}`;
  const r = await within(
    runCli(['backfill', '--no-workers', '--source', `dir:${join(dir, 'feed')}`, '--to', START, '--json'], { env }),
    120_000,
    () => `backfill --no-workers did not end\n${logs()}`,
  );
  assert.equal(r.code, 0, r.stderr);
  const holder = cluster.nodes[cluster.keysPerNode('{st-cl-o}:*').findIndex((keys) => keys.length > 0)];
  assert.ok(holder, 'one master holds the queues');
  const before = index.log().length;
  await holder.kill();
  // from the worker's first error line (the event, however long a busy machine takes to see the
  // master gone), six more seconds of retries down: a line per retry would be dozens
  for (let i = 0; i < 600 && !index.log().slice(before).includes('"level":50'); i++) await sleep(50);
  await sleep(6000);
  const during = index
    .log()
    .slice(before)
    .split('\n')
    .filter((l) => l.includes('"level":50'));
  await holder.restart();
  await cluster.waitServing();
  assert.ok(during.length >= 1 && during.length <= 3, `error lines while the master was down: ${during.length}\n${during.join('\n')}`);
  index.child.kill('SIGTERM');
  feed.child.kill('SIGTERM');
  await within(Promise.all([index.exit, feed.exit]), 60_000, () => `a worker did not stop on SIGTERM\n${logs()}`);
});

test('lookup --no-workers with lookup, index and artefact workers on the cluster; the quota ledger is read back from it', async () => {
  const KEY = 'cluster-key-5521';
  const files = [1, 2, 3].map((n) => makeFakeFile(`cluster-${n}`, { behaviours: 2, artefactBytes: 64 }));
  const fake = await startFakeGti({ apiKey: KEY, files });
  cleanup(() => fake.close());
  // every call the fake answered is in the ledger on the cluster (checked when the test ends)
  accountApi(fake, { redisUrl: redisUrl(), queuePrefix: '{st-cl-d}', redisCluster: true });
  const file = join(dir, 'd.db');
  const blobs = join(dir, 'blobs');
  const env = {
    ...envOf('st-cl-d', file),
    GTI_APIKEY: KEY,
    GTI_BASE_URL: fake.baseUrl,
    SANDTRAIL_GTI_USER: 'cluster',
    SANDTRAIL_ARTEFACTS_DIR: blobs,
    SANDTRAIL_LOG_LEVEL: 'info',
  };
  const workers = [startWorker('lookup', env), startWorker('index', env), startWorker('artefact', env)];
  for (const w of workers) await waitFor(() => w.log().includes('"worker started"'), w.log);
  const r = await runCli(['lookup', '--no-workers', '--artefacts', 'pcap', '--json', ...files.map((f) => f.sha256)], { env });
  assert.equal(r.code, 0, r.stderr);
  const summary = JSON.parse(r.stdout) as { counts: unknown; documents: { indexed: number }; api_units: number };
  assert.deepEqual(summary.counts, { ok: 3 });
  assert.equal(summary.documents.indexed, 6);
  const pcaps = files.flatMap((f) => f.behaviours.filter((b) => (b.attributes as { has_pcap?: boolean }).has_pcap === true)).length;
  assert.ok(pcaps > 0, 'the fake files have pcaps');
  await waitFor(
    () => countFiles(blobs) >= pcaps,
    () => workers.map((w) => w.log()).join('\n'),
  );
  assert.equal(countFiles(blobs), pcaps, 'every pcap downloaded once');

  // the ledger the workers wrote on the cluster: one row per user, units per operation
  const ledger = await runCli(['ledger', '--json', '--user', 'cluster'], { env });
  assert.equal(ledger.code, 0, ledger.stderr);
  const rows = JSON.parse(ledger.stdout) as { units: Record<string, number>; operations: Record<string, { calls: number }> }[];
  assert.equal(rows[0]?.units.api_requests, summary.api_units, ledger.stdout);
  assert.ok(Object.values(rows[0]?.operations ?? {}).some((o) => o.calls > 0));

  for (const w of workers) w.child.kill('SIGTERM');
  for (const w of workers) assert.deepEqual(await w.exit, { code: 0, signal: null }, w.log());
  assert.ok(!workers.some((w) => w.log().includes(KEY)) && !workers.some((w) => w.log().includes(PASSWORD)), 'no secret is logged');
});

test('the scheduler on the cluster enqueues its minutes for the workers, and its dashboard and readiness read the cluster', async () => {
  // minutes of the last quarter hour: the scheduler walks from its start to the newest minute the lag allows
  const start = addMinutes(msToMinute(Date.now()), -12);
  const recent = await writeFeed({ out: join(dir, 'recent'), seed: 'sched', start, minutes: 3, perMinute: 20, malformedRate: 0 });
  const file = join(dir, 'e.db');
  const TOKEN = 'cluster-ops-token-0123456789';
  const env = { ...envOf('st-cl-e', file), SANDTRAIL_LOG_LEVEL: 'info', SANDTRAIL_HTTP_PORT: '0', SANDTRAIL_HTTP_TOKEN: TOKEN };
  const scheduler = startWorker('scheduler', {
    ...env,
    SANDTRAIL_SOURCE: `dir:${join(dir, 'recent')}`,
    SANDTRAIL_START: start,
    SANDTRAIL_LIVE_LAG_MINUTES: '0',
    SANDTRAIL_LIVE_TICK_MS: '500',
  });
  const feed = startWorker('feed', env);
  const index = startWorker('index', env);
  const seen = (): string => scheduler.log() + feed.log() + index.log();
  await waitFor(() => storedCount(file) === recent.expectedIds.length, seen);
  const url = /"http":"(http:[^"]+)"/.exec(scheduler.log())?.[1];
  assert.ok(url, scheduler.log());
  const auth = { authorization: `Bearer ${TOKEN}` };
  assert.equal((await fetch(`${url}/readyz`, { headers: auth })).status, 200);
  const dash = (await (await fetch(`${url}/queues/api/queues`, { headers: auth })).json()) as { queues: { name: string }[] };
  assert.deepEqual(dash.queues.map((q) => q.name).sort(), ['artefacts', 'feed', 'index', 'lookup']);
  const db = new BetterSqlite3(file, { readonly: true });
  cleanup(() => db.close());
  const ok = (): number =>
    (
      db.prepare("SELECT count(*) AS n FROM batches WHERE status = 'ok' AND batch BETWEEN ? AND ?").get(start, addMinutes(start, 2)) as {
        n: number;
      }
    ).n;
  await waitFor(() => ok() === 3, seen);
  assert.deepEqual(storeContents(file).ids, recent.expectedIds);
  for (const w of [scheduler, feed, index]) w.child.kill('SIGTERM');
  for (const w of [scheduler, feed, index]) assert.deepEqual(await w.exit, { code: 0, signal: null }, w.log());
});

test('misuse at start-up, each one line naming the fix: a listed node that does not answer, a cluster node without cluster mode, cluster mode on a single Redis, a master down', async () => {
  const file = join(dir, 'f.db');
  const feedDir = `dir:${join(dir, 'feed')}`;
  const single = await RedisServer.start({ aof: false });
  cleanup(() => single.stop());
  const [first, second] = redisUrl().split(',') as [string, string];
  const backfill = async (over: NodeJS.ProcessEnv): Promise<{ code: number | null; line: string; stderr: string }> => {
    const began = Date.now();
    const r = await runCli(['backfill', '--source', feedDir], { env: { ...envOf('st-cl-f', file), ...over } });
    assert.ok(Date.now() - began < 20_000, 'at start-up, not after retries');
    assert.ok(!r.stderr.includes(PASSWORD), 'the password is never shown');
    return {
      code: r.code,
      line: r.stderr.trim().split('\n').length === 1 ? r.stderr.trim() : `(not one line) ${r.stderr}`,
      stderr: r.stderr,
    };
  };
  const refused: [NodeJS.ProcessEnv, RegExp][] = [
    [{ REDIS_URL: `${redisUrl()},redis://127.0.0.1:1` }, /cannot reach Redis at redis:\/\/127\.0\.0\.1:1\/?: .*remove it from REDIS_URL/],
    [{ REDIS_URL: first }, /is a node of a Redis Cluster: set SANDTRAIL_REDIS_CLUSTER=true/],
    [
      { REDIS_URL: single.url, SANDTRAIL_REDIS_CLUSTER: 'true' },
      /is not a cluster node \(cluster_enabled:0\): unset SANDTRAIL_REDIS_CLUSTER/,
    ],
  ];
  for (const [over, expected] of refused) {
    const r = await backfill(over);
    assert.notEqual(r.code, 0);
    assert.match(r.line, expected);
  }
  // one node is enough to find the others
  const one = await backfill({ REDIS_URL: first, SANDTRAIL_REDIS_CLUSTER: 'true' });
  assert.equal(one.code, 0, one.stderr);

  // a master down: the slot map still names it (or the cluster already says it fails)
  const down = cluster.nodes[2] as RedisServer;
  await down.kill();
  try {
    const r = await backfill({ REDIS_URL: `${first},${second}` });
    assert.notEqual(r.code, 0);
    assert.match(r.line, /announces master 127\.0\.0\.1:\d+, which does not answer from here|cluster_state:fail/);
  } finally {
    await down.restart();
    await cluster.waitServing();
  }
});

test('doctor checks the cluster: every master reachable and its settings, the user rights', async () => {
  const r = await runCli(['doctor', '--json'], { env: envOf('st-cl-g', join(dir, 'g.db')) });
  const checks = (JSON.parse(r.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks;
  const redis = checks.find((c) => c.id === 'redis');
  assert.equal(redis?.status, 'pass', r.stdout);
  assert.match(redis?.detail ?? '', /3 masters, every slot served/);
  assert.equal(checks.find((c) => c.id === 'redis.rights')?.status, 'pass');
  assert.equal(checks.find((c) => c.id === 'redis.persistence')?.status, 'pass');
});

interface Started {
  child: ChildProcess;
  log(): string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A worker entry point (dist/workers/<kind>-worker.js, or dist/workers/scheduler.js) as its own process, killed at the end of the test. */
function startWorker(kind: 'feed' | 'index' | 'lookup' | 'artefact' | 'scheduler', env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, [builtWorker(kind === 'scheduler' ? 'scheduler' : `${kind}-worker`)], {
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (text += s));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  cleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exit;
  });
  return { child, log: () => text, exit };
}

/** `p`, or a failure saying `why()` once `ms` have passed. */
async function within<T>(p: Promise<T>, ms: number, why: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(why())), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitFor(cond: () => boolean, seen: () => string, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) assert.fail(`timed out; seen:\n${seen().slice(-4000)}`);
    await sleep(50);
  }
}

function countFiles(root: string): number {
  try {
    return readdirSync(root, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && !e.name.endsWith('.part')).length;
  } catch {
    return 0;
  }
}
