import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, test } from 'vitest';
import { writeFeed, type FeedManifest } from '../../src/synth/index.js';
import { runCli, startCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { minuteFeeds, type MinuteFeeds } from '../support/minuteFeeds.js';
import { RedisCluster } from '../support/redisCluster.js';
import { expectedDead, storeContents, storedCount } from '../support/storeContents.js';

// A Redis Cluster as teams run it: three masters, a replica each, AOF. What an operator meets is
// a master dying and its replica taking over; then, with that replica now a master of its own
// and no replica left, a second loss that leaves the queues' slot unserved.
const START = '202611070000';
const MINUTES = 8;

let cluster: RedisCluster;
let dir: string;
let manifest: FeedManifest;
beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 1, aof: true });
  await cluster.waitReplicated();
  dir = tempDir();
  manifest = await writeFeed({
    out: join(dir, 'feed'),
    seed: 'failover',
    start: START,
    minutes: MINUTES,
    perMinute: 60,
    malformedRate: 0.03,
  });
});
afterAll(() => cluster?.stop());

const envOf = (prefix: string, file: string, over: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  REDIS_URL: cluster.url(),
  SANDTRAIL_QUEUE_PREFIX: prefix,
  SANDTRAIL_STORE: `sqlite:${file}`,
  SANDTRAIL_LOG_LEVEL: 'warn',
  SANDTRAIL_INDEX_CHUNK_MAX_DOCS: '10',
  ...over,
});
const backfillArgs = (): string[] => ['backfill', '--source', `dir:${join(dir, 'feed')}`, '--json'];

function assertExact(file: string): void {
  const c = storeContents(file);
  assert.deepEqual(c.ids, manifest.expectedIds, 'exactly the feed ids');
  assert.deepEqual(c.dead, expectedDead(manifest), 'exactly the malformed lines dead-lettered');
}

/** Minutes the batch log of a SQLite store calls ok although the store lacks some of their ids. */
function okButMissing(file: string, f: MinuteFeeds): string[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const ok = db.prepare("SELECT batch FROM batches WHERE status = 'ok'").pluck().all() as string[];
    const stored = new Set(storeContents(file).ids);
    return ok.filter((m) => (f.ids.get(m) ?? []).some((id) => !stored.has(id)));
  } finally {
    db.close();
  }
}

test('a failover mid-backfill ends exact; a restart with the dead master still listed goes on with a warning naming it, and ends exact; a typo in the list is refused', async () => {
  const file = join(dir, 'a.db');
  const run = startCli(backfillArgs(), envOf('st-fo-a', file));
  for (let i = 0; i < 400 && storedCount(file) < manifest.expectedIds.length / 5; i++) await sleep(25);
  const { node: master, replicas } = cluster.masterOf('{st-fo-a}');
  assert.equal(replicas, 1, 'the queues master has its replica');
  await master.kill();
  process.stderr.write(`redisFailover: killed the master holding {st-fo-a}, port ${master.port}\n`);
  const first = await run.exited;
  assert.equal(first.code, 0, first.stderr);
  assertExact(file);
  const promoted = cluster.masterOf('{st-fo-a}');
  assert.notEqual(promoted.node.port, master.port, 'its replica took over');
  assert.equal(promoted.replicas, 0, 'the new master has no replica left');

  // a restart (a deploy, a crash restart) with the same REDIS_URL, the dead node still listed
  const again = await runCli(backfillArgs(), { env: envOf('st-fo-a', file) });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, new RegExp(`127\\.0\\.0\\.1:${master.port}.*the cluster knows it as a master marked failed`));
  assertExact(file);

  // an address no node of the cluster knows is a mistake in the configuration
  const typo = await runCli(backfillArgs(), { env: envOf('st-fo-a', file, { REDIS_URL: `${cluster.url()},redis://127.0.0.1:1` }) });
  assert.notEqual(typo.code, 0);
  assert.match(typo.stderr, /cannot reach Redis at redis:\/\/127\.0\.0\.1:1\/?: .*remove it from REDIS_URL/);

  // doctor names the failed node, says every slot is served, and warns of the master left without a replica
  const topology = async (): Promise<{ status: string; detail: string }> => {
    const r = await runCli(['doctor', '--json'], { env: envOf('st-fo-a', file) });
    const checks = (JSON.parse(r.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks;
    return checks.find((c) => c.id === 'redis.cluster') ?? assert.fail(`no redis.cluster check: ${r.stdout}`);
  };
  const after = await topology();
  assert.equal(after.status, 'warn', after.detail);
  assert.match(after.detail, /^every slot served by 3 masters/);
  assert.match(after.detail, new RegExp(`down: 127\\.0\\.0\\.1:${master.port} \\(a master marked failed`));
  assert.match(after.detail, new RegExp(`without a replica: 127\\.0\\.0\\.1:${promoted.node.port}`));

  // the old master back: it rejoins as the new master's replica, and doctor has nothing to say
  await master.restart();
  await cluster.waitServing();
  await cluster.waitReplicated();
  for (let i = 0; i < 100 && (await topology()).status !== 'pass'; i++) await sleep(200);
  assert.match((await topology()).detail, /every master has a replica/);
}, 600_000);

test('the queues slot lost for good: a backfill ends within worker.redisWaitMs naming the cluster state and the slot, no minute ok unless stored; a worker started meanwhile waits, says so once, and starts once the slot is served again', async () => {
  const file = join(dir, 'b.db');
  const f = await minuteFeeds(dir, '202611080000', MINUTES, 60, 7);
  const waitMs = 4000;
  const args = ['backfill', '--source', `dir:${f.dir}`, '--json'];
  const run = startCli(args, envOf('st-fo-b', file, { SANDTRAIL_WORKER_REDIS_WAIT_MS: String(waitMs) }));
  for (let i = 0; i < 400 && storedCount(file) < f.all.length / 5; i++) await sleep(25);
  // the queues' master and its replica both lost: no node is left to serve the slot
  const { node: master } = cluster.masterOf('{st-fo-b}');
  const replica = cluster.nodes.find((n) => cluster.cli(n, 'INFO', 'replication').includes(`master_port:${master.port}`));
  await replica?.kill();
  await master.kill();
  const lostAt = Date.now();
  process.stderr.write(
    `redisFailover: killed the master holding {st-fo-b}, port ${master.port}, and its replica, port ${replica?.port ?? 'none'}\n`,
  );
  const ended = await Promise.race([run.exited, sleep(waitMs + 60_000).then(() => undefined)]);
  if (!ended) run.child.kill('SIGKILL');
  assert.ok(ended, `the backfill ended by itself: ${run.stderr()}`);
  const took = Date.now() - lostAt;
  process.stderr.write(`redisFailover: the backfill ended ${took} ms after the loss (worker.redisWaitMs ${waitMs})\n`);
  assert.notEqual(ended.code, 0);
  // the wait starts at the first unanswered poll; the cluster marks the master failed after its node timeout (2 s)
  assert.ok(took < waitMs + 20_000, `ended ${took} ms after the loss: bound ${waitMs} ms plus the cluster's own timeouts`);
  const cause = ended.stderr.split('\n').find((l) => l.includes('the run stopped waiting for it')) ?? '';
  process.stderr.write(`redisFailover: the cause given: ${cause}\n`);
  assert.match(cause, /cluster_state:fail/, ended.stderr);
  assert.match(cause, new RegExp(`slot \\d+ \\(\\{st-fo-b\\}\\) is on 127\\.0\\.0\\.1:${master.port}, its last master, marked failed`));
  assert.deepEqual(okButMissing(file, f), [], 'no minute is ok that is not stored');

  // a worker started while the slot has no master waits, and says so once
  const worker = startCli(['worker', 'index'], envOf('st-fo-b', file, { SANDTRAIL_LOG_LEVEL: 'info' }));
  try {
    for (let i = 0; i < 300 && !/waiting for it/.test(worker.stderr()); i++) await sleep(50);
    await sleep(3000);
    assert.equal(worker.stderr().match(/the Redis Cluster is not serving: waiting for it/g)?.length, 1, worker.stderr());
    assert.equal(worker.child.exitCode, null, 'still waiting');
    await master.restart();
    if (replica) await replica.restart();
    await cluster.waitServing();
    for (let i = 0; i < 300 && !/"msg":"worker started"/.test(worker.stderr()); i++) await sleep(50);
    assert.match(worker.stderr(), /serves every slot again: starting/);
    assert.match(worker.stderr(), /"msg":"worker started"/);
    assert.equal(worker.stderr().match(/going on through the listed nodes that answer/g)?.length, 2, 'each silent node named once');
    // its connection to the cluster made before the stop: a stop with Redis unanswered is forced (exit 130)
    await sleep(2000);
  } finally {
    worker.child.kill('SIGTERM');
  }
  const stopped = await worker.exited;
  assert.equal(stopped.code, 0, stopped.stderr);
  // a re-run stores the rest, exactly
  const again = await runCli(args, { env: envOf('st-fo-b', file) });
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(storeContents(file).ids, f.all);
}, 600_000);
