import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { createLogger } from '../../src/log/index.js';
import { createQueues, feedJobId, parseCursor, Scheduler, type Queues } from '../../src/queue/index.js';
import { FeedWorker } from '../../src/feed/index.js';
import { IndexWorker } from '../../src/indexing/index.js';
import { openStore } from '../../src/store/index.js';
import { writeFeed } from '../../src/synth/index.js';
import { accountApi } from '../support/apiAccounting.js';
import { tempDir, testConfig, cleanup } from '../support/env.js';
import { startFakeGti } from '../support/fakeGti.js';
import { RedisServer } from '../support/redisServer.js';
import { storeContents } from '../support/storeContents.js';
import { addMinutes, minuteToMs, msToMinute } from '../../src/minute/index.js';

const KEY = 'live-key-77';

/** Ticks the scheduler until its cursor reaches `minute`, or fails saying where it stopped. */
async function waitCursor(queues: Queues, prefix: string, s: Scheduler, minute: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    await s.tick();
    if ((await Scheduler.pointers(queues, prefix)).cursor === minute) return;
    await sleep(100);
  }
  assert.fail(`cursor never reached ${minute}: ${JSON.stringify(await Scheduler.pointers(queues, prefix))}`);
}
const start = '202611040000';

/** A logger at warn whose lines are kept, parsed. */
function capturedLog(): { lines: { msg: string }[]; log: ReturnType<typeof createLogger> } {
  const lines: { msg: string }[] = [];
  const log = createLogger('warn', {}, { destination: { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string }) } });
  return { lines, log };
}

/**
 * A feed directory's pipeline on a Redis of its own (no AOF: a restart empties it): feed and index
 * workers, and schedulers of that directory from `start` on the clock `now()`, logging to `log`.
 */
async function lostStateRig(dir: string, feedDir: string, now: () => number, log = createLogger('silent')) {
  const redis = await RedisServer.start({ aof: false });
  const config = { ...(await testConfig(dir)), redisUrl: redis.url };
  const store = openStore(config.store, config);
  const queues = createQueues(redis.url, config);
  const opts = { redisUrl: redis.url, config, store, queues, log: createLogger('silent') };
  const workers = [new FeedWorker(opts), new IndexWorker(opts)];
  workers.forEach((w) => w.start());
  /** A scheduler from `start`, or (`fromStart` false) one given no --start. */
  const scheduler = (fromStart = true): Scheduler =>
    new Scheduler({
      queues,
      store,
      prefix: config.queuePrefix,
      sourceSpec: `dir:${feedDir}`,
      log,
      lagMs: 60 * 60_000,
      tickMs: 60_000,
      retryFailedMs: 300_000,
      ...(fromStart ? { start: parseCursor(start) } : {}),
      now,
    });
  /** Minute `m`'s chunks were lost with Redis: its marks go, and its batch reads pending again. */
  const loseChunks = (m: string, alsoBehaviours = false): void => {
    const db = new BetterSqlite3(join(dir, 'store.db'));
    db.prepare('DELETE FROM batch_chunks WHERE batch = ?').run(m);
    db.prepare("UPDATE batches SET status = 'pending' WHERE batch = ?").run(m);
    if (alsoBehaviours) {
      // every day's behaviours and pivot rows, and where the locator says they are
      const dayTables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB '[bp][ei][hv]*_*'")
        .pluck()
        .all() as string[];
      for (const t of dayTables) db.exec(`DELETE FROM "${t}"`);
    }
    db.close();
  };
  const close = async (): Promise<void> => {
    await Promise.all(workers.map((w) => w.stop(true)));
    await queues.close();
    await store.close();
    await redis.stop();
  };
  return { redis, config, store, queues, scheduler, loseChunks, close };
}

/**
 * A feed of `minutes` from `start` and its lostStateRig, on a clock where minute `newest` (by
 * default the feed's last) is the newest publishable one.
 */
async function feedRig(seed: number, minutes: number, perMinute: number, newest = minutes - 1) {
  const dir = tempDir();
  const feedDir = join(dir, 'feed');
  await writeFeed({ out: feedDir, seed, start, minutes, perMinute, malformedRate: 0 });
  const { lines, log } = capturedLog();
  const now = minuteToMs(addMinutes(start, newest)) + 60_000 + 60 * 60_000;
  return { lines, feedDir, now, rig: await lostStateRig(dir, feedDir, () => now, log) };
}

test('live mode: minutes are enqueued as they become publishable, the cursor waits for NotAvailableYet, a restart resumes from the saved cursor', async () => {
  const dir = tempDir();
  const manifest = await writeFeed({ out: join(dir, 'feed'), seed: 9, start, minutes: 6, perMinute: 12, malformedRate: 0 });
  const fake = await startFakeGti({ apiKey: KEY, feedDir: join(dir, 'feed') });
  cleanup(() => fake.close());
  const config = await testConfig(dir, { gti: { apiKey: KEY, baseUrl: fake.baseUrl }, feed: { notAvailableDelayMs: 100, backoffMs: 100 } });
  accountApi(fake, config);
  const log = createLogger('silent');
  const store = openStore(config.store, config);
  const queues = createQueues(config.redisUrl!, config);
  let now = minuteToMs(addMinutes(start, 2)) + 60_000 + 60 * 60_000; // minutes 0..2 are publishable
  // the workers judge a minute's age by the same clock (one older than the feed's 7 days is never published)
  const opts = { redisUrl: config.redisUrl!, config, store, queues, log, now: () => now };
  const workers = [new FeedWorker(opts), new IndexWorker(opts)];
  workers.forEach((w) => w.start());
  const scheduler = (): Scheduler =>
    new Scheduler({
      queues,
      store,
      prefix: config.queuePrefix,
      sourceSpec: 'api',
      log,
      lagMs: 60 * 60_000,
      tickMs: 60_000,
      retryFailedMs: 300_000,
      start: parseCursor(`${start}-3`),
      now: () => now,
    });
  try {
    fake.setFaults({ notAvailableAfter: addMinutes(start, 2) });
    const s1 = scheduler();
    await waitCursor(queues, config.queuePrefix, s1, addMinutes(start, 1));
    await sleep(500);
    assert.equal(
      (await Scheduler.pointers(queues, config.queuePrefix)).cursor,
      addMinutes(start, 1),
      'cursor waits while minute 2 is not available yet',
    );
    assert.ok(fake.requests.some((r) => r.status === 400));
    fake.clearFaults();
    await waitCursor(queues, config.queuePrefix, s1, addMinutes(start, 2));
    await s1.stop();

    // down for a while: a new scheduler catches up from the saved pointers, oldest first
    now += 3 * 60_000;
    const s2 = scheduler();
    await waitCursor(queues, config.queuePrefix, s2, addMinutes(start, 5));
    await s2.stop();

    // `${start}-3`: the first three lines of the first minute were consumed before, so ids seen
    // only there are not stored; everything else is
    const occurrences = new Map<string, number>();
    const skippedLines: string[] = [];
    for (const f of manifest.files) {
      const lines = execFileSync('bzip2', ['-dc', join(dir, 'feed', f.file)])
        .toString()
        .split('\n')
        .filter(Boolean);
      lines.forEach((line, i) => {
        const raw = (JSON.parse(line) as { id: string }).id;
        const id = `${raw.slice(0, 64).toLowerCase()}${raw.slice(64)}`;
        if (f.minute === start && i < 3) skippedLines.push(id);
        else occurrences.set(id, (occurrences.get(id) ?? 0) + 1);
      });
    }
    const expected = manifest.expectedIds.filter((id) => occurrences.has(id));
    assert.ok(
      skippedLines.some((id) => !occurrences.has(id)),
      'the offset skips at least one id',
    );
    assert.deepEqual(storeContents(join(dir, 'store.db')).ids, expected);
    const [first] = await store.batches.get([start]);
    assert.equal(first?.lines, manifest.files[0]!.lines - 3);
  } finally {
    await Promise.all(workers.map((w) => w.stop(true)));
    await queues.close();
    await store.close();
  }
});

test('live mode after Redis restarted empty: the scheduler resumes from the batch log and redoes a minute whose chunks were lost', async () => {
  const dir = tempDir();
  const feedDir = join(dir, 'feed');
  const manifest = await writeFeed({ out: feedDir, seed: 12, start, minutes: 6, perMinute: 10, malformedRate: 0 });
  let now = minuteToMs(addMinutes(start, 2)) + 60_000 + 60 * 60_000;
  const rig = await lostStateRig(dir, feedDir, () => now);
  const { config, queues, store } = rig;
  try {
    const s1 = rig.scheduler();
    await waitCursor(queues, config.queuePrefix, s1, addMinutes(start, 2));
    await s1.stop();
    // minute 1's chunks "were still in Redis": its marks are gone, and so are the behaviours
    rig.loseChunks(addMinutes(start, 1), true);
    await rig.redis.restart({ empty: true });
    assert.deepEqual(await Scheduler.pointers(queues, config.queuePrefix), { scheduled: null, cursor: null });

    now += 3 * 60_000;
    const s2 = rig.scheduler();
    await waitCursor(queues, config.queuePrefix, s2, addMinutes(start, 5));
    await s2.stop();
    const entries = await store.batches.get(manifest.files.map((f) => f.minute));
    assert.deepEqual(
      entries.map((e) => [e.batch, e.status]),
      manifest.files.map((f) => [f.minute, 'ok']),
    );
    // minute 1 was read again; minutes 0 and 2 were complete and were not
    const ids = new Set(storeContents(join(dir, 'store.db')).ids);
    assert.ok(ids.size > 0);
    const lines = execFileSync('bzip2', ['-dc', join(feedDir, manifest.files[1]!.file)])
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const raw = (JSON.parse(l) as { id: string }).id;
        return `${raw.slice(0, 64).toLowerCase()}${raw.slice(64)}`;
      });
    for (const id of lines) assert.ok(ids.has(id), `minute 1's ${id} is stored again`);
  } finally {
    await rig.close();
  }
});

test('live mode after Redis restarted empty with no new minute due yet: the scheduler says so once, and its cursor walk redoes a lost minute', async () => {
  // minutes 0..2 are publishable, and stay the newest: the clock does not move
  const { lines, rig } = await feedRig(13, 3, 6);
  const { config, queues, store } = rig;
  try {
    const s1 = rig.scheduler();
    await waitCursor(queues, config.queuePrefix, s1, addMinutes(start, 2));
    await s1.stop();
    rig.loseChunks(addMinutes(start, 1));
    await rig.redis.restart({ empty: true });

    const s2 = rig.scheduler();
    await waitCursor(queues, config.queuePrefix, s2, addMinutes(start, 2));
    for (let i = 0; i < 5; i++) await s2.tick();
    await s2.stop();
    assert.equal(lines.filter((l) => l.msg.startsWith('no scheduler state in Redis')).length, 1, JSON.stringify(lines));
    const [minute1] = await store.batches.get([addMinutes(start, 1)]);
    assert.equal(minute1?.status, 'ok');
  } finally {
    await rig.close();
  }
});

test('live mode: a minute that failed (the API down past its tries) holds the cursor and is run again after live.retryFailedMs', async () => {
  const dir = tempDir();
  const lagMs = 60 * 60_000;
  // minutes 0..2 are publishable on the real clock: the batch log's failure times are real too
  const first = msToMinute(Math.floor((Date.now() - lagMs - 4 * 60_000) / 60_000) * 60_000);
  const manifest = await writeFeed({ out: join(dir, 'feed'), seed: 21, start: first, minutes: 3, perMinute: 5, malformedRate: 0 });
  const fake = await startFakeGti({ apiKey: KEY, feedDir: join(dir, 'feed') });
  cleanup(() => fake.close());
  const config = await testConfig(dir, {
    gti: { apiKey: KEY, baseUrl: fake.baseUrl, maxRetries: 0, backoffMs: 20 },
    feed: { attempts: 2, backoffMs: 20, notAvailableDelayMs: 100 },
  });
  accountApi(fake, config);
  const log = createLogger('silent');
  const store = openStore(config.store, config);
  const queues = createQueues(config.redisUrl!, config);
  const opts = { redisUrl: config.redisUrl!, config, store, queues, log };
  const workers = [new FeedWorker(opts), new IndexWorker(opts)];
  workers.forEach((w) => w.start());
  const minutes = manifest.files.map((f) => f.minute);
  const s = new Scheduler({
    queues,
    store,
    prefix: config.queuePrefix,
    sourceSpec: 'api',
    log,
    lagMs,
    tickMs: 60_000,
    retryFailedMs: 3000,
    start: parseCursor(first),
  });
  try {
    fake.setFaults({ burst: { status: 503, count: 100_000 } });
    const statuses = async (): Promise<string[]> => (await store.batches.get(minutes)).map((e) => e.status);
    for (let i = 0; i < 200 && (await statuses()).join() !== 'failed,failed,failed'; i++) {
      await s.tick();
      await sleep(100);
    }
    assert.deepEqual(await statuses(), ['failed', 'failed', 'failed']);
    for (let i = 0; i < 3; i++) await s.tick();
    assert.equal(
      (await Scheduler.pointers(queues, config.queuePrefix)).cursor,
      addMinutes(first, -1),
      'the cursor waits before a failed minute',
    );

    // the API is back: within retryFailedMs nothing is asked again, after it every failed minute is
    fake.clearFaults();
    const asked = fake.requests.length;
    await s.tick();
    assert.equal(fake.requests.length, asked, 'not run again before its wait is over');
    await waitCursor(queues, config.queuePrefix, s, minutes[2]!);
    assert.deepEqual(await statuses(), ['ok', 'ok', 'ok']);
    // each minute was run again once; the count of its runs goes once the cursor is past it
    assert.deepEqual(await queues.connection.hmget(`${config.queuePrefix}:live:retries`, ...minutes), [null, null, null]);
    assert.deepEqual(storeContents(join(dir, 'store.db')).ids, manifest.expectedIds);
  } finally {
    await s.stop();
    await Promise.all(workers.map((w) => w.stop(true)));
    await queues.close();
    await store.close();
  }
});

test('a first live run on a store of backfills starts at now − lag, as documented; only a store a scheduler ran on is resumed from', async () => {
  // minute 39 is the newest publishable one
  const { lines, feedDir, now, rig } = await feedRig(14, 3, 4, 39);
  const { config, queues, store } = rig;
  try {
    // a backfill of two minutes, then a gap of 30, then two more: done by backfills, not a scheduler
    const none = { lines: 1, accepted: 1, rejected: 0, chunks: 0, bytesDecoded: 1, error: null };
    for (const m of [0, 1, 32, 33]) {
      await store.batches.record({
        batch: addMinutes(start, m),
        source: `dir:${feedDir}`,
        status: 'ok',
        ...none,
        startedAt: now,
        finishedAt: now,
      });
    }
    const s = rig.scheduler(false);
    await s.tick();
    await s.stop();
    // now − lag is minute 39: that is where it starts, and no minute of the gap is enqueued
    // (the cursor is past minute 39 too once a worker found it missing)
    const p = await Scheduler.pointers(queues, config.queuePrefix);
    assert.equal(p.scheduled, addMinutes(start, 39));
    assert.ok(p.cursor === addMinutes(start, 38) || p.cursor === addMinutes(start, 39), JSON.stringify(p));
    assert.equal(await queues.feed.getJobState(feedJobId(addMinutes(start, 2))), 'unknown');
    assert.deepEqual(
      lines.filter((l) => /queue state was lost|queue state lost/.test(l.msg)),
      [],
    );

    // that scheduler left its mark: a Redis lost from now on is resumed from the batch log
    await rig.redis.restart({ empty: true });
    const again = rig.scheduler(false);
    await again.tick();
    await again.stop();
    assert.equal(lines.filter((l) => l.msg.startsWith('no scheduler state in Redis')).length, 1, JSON.stringify(lines));
  } finally {
    await rig.close();
  }
});

test('a --start given where a cursor is saved is said to be ignored, once; not by the scheduler that saved it', async () => {
  const { lines, rig } = await feedRig(15, 2, 3);
  try {
    // its own --start saved the cursor: its next ticks find it saved, and say nothing
    const s1 = rig.scheduler();
    for (let i = 0; i < 3; i++) await s1.tick();
    await s1.stop();
    assert.deepEqual(
      lines.filter((l) => l.msg.startsWith('--start is ignored')),
      [],
    );
    const s2 = rig.scheduler();
    for (let i = 0; i < 3; i++) await s2.tick();
    await s2.stop();
    assert.equal(lines.filter((l) => l.msg.startsWith('--start is ignored')).length, 1);
  } finally {
    await rig.close();
  }
});
