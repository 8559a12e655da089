/**
 * `npm run soak:month`: a month of the feed through the real workers, on a simulated clock. Each
 * simulated day, a small feed of that day's minutes is written, backfilled through a feed worker
 * and an index worker on real Redis into the store (retention on, judged by the simulated clock),
 * and retention runs to completion; then the day's figures are printed: store size, day
 * partitions, Redis memory and keys, behaviours stored, dead letters. Once the retention window
 * is full, the store and Redis must stay flat (within --tolerance), and no Redis key may grow
 * with the days: the run fails otherwise. See --help.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/log/index.js';
import { addMinutes, msToMinute, type MinuteId } from '../src/minute/index.js';
import { createQueues } from '../src/queue/index.js';
import { ensureRedis } from '../src/redis/index.js';
import { closeQueues, runBackfill, superviseWorkers } from '../src/runner/index.js';
import { openStore, retentionCutoffs } from '../src/store/index.js';
import { writeFeed } from '../src/synth/index.js';
import { UsageError, outOption, parseFlags, positiveInt } from './args.js';
import { startBenchElasticsearch, type BenchElasticsearch } from './elasticsearch.js';

const HELP = `Usage: npm run soak:month -- [options]

Pushes D simulated days of the feed (M minutes a day, P lines a minute, 2% malformed) through a
feed worker and an index worker on real Redis (REDIS_URL, or a private redis-server) into a
fresh store with a retention of R days judged by the simulated clock: SQLite (<out>/soak.db), or
with --store es a real Elasticsearch node (started from the distribution the tests use, or
ELASTICSEARCH_URL's cluster) under an index prefix of the run's own, deleted afterwards. Prints
per day: store size (SQLite: the file; Elasticsearch: the primary segments of the day indices and
the locator, what retention governs: the bookkeeping indices are aged by real time, see below), day partitions, Redis memory and keys, behaviours
stored, dead letters. Fails when, from day R + 1 on, the store or Redis memory leaves the band of ±tolerance
around its day R + 1 figure, or a Redis key grows over the last R days (by more than the
tolerance and 4 KiB).

  --days D             simulated days (default 30)
  --retention-days R   retention.days of the run (default 7)
  --minutes M          feed minutes per simulated day (default 6)
  --per-minute P       lines per minute file (default 30)
  --store KIND         sqlite (default) or es
  --tolerance T        allowed relative drift once the window is full (default 0.10)
  --out DIR            directory of the feed and the store (default bench/out/soak)
  --json               one JSON object on stdout
  -h, --help           show this help

BullMQ removes completed jobs by their real age (7 days) or count: the soak compresses a day into
seconds, so after each simulated day it removes the completed jobs older than the window the same
way (Queue.clean), on the simulated clock. Bookkeeping (dead letters, batch-log rows) is aged by
the real time it was written, so it is not expired within a run: its counts are printed.

Exit codes: 0 flat, 1 a figure grew or a day failed, 2 usage error.
`;

const DAY = 86_400;
/** 2026-01-01T00:00:00Z: the first simulated day. */
const T0 = Date.UTC(2026, 0, 1) / 1000;
const say = (msg: string): void => void process.stderr.write(`soak:month: ${msg}\n`);

interface DayFigures {
  day: number;
  date: string;
  storeMB: number;
  partitions: number;
  redisMB: number;
  redisKeys: number;
  behaviours: number;
  deadLetters: number;
}

interface Options {
  store: 'sqlite' | 'es';
  days: number;
  retentionDays: number;
  minutes: number;
  perMinute: number;
  tolerance: number;
  out: string;
  json: boolean;
}

function options(argv: string[]): Options | undefined {
  const v = parseFlags(argv, {
    days: { type: 'string' },
    'retention-days': { type: 'string' },
    minutes: { type: 'string' },
    'per-minute': { type: 'string' },
    store: { type: 'string' },
    tolerance: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (v.help) {
    process.stdout.write(HELP);
    return undefined;
  }
  const tolerance = v.tolerance === undefined ? 0.1 : Number(v.tolerance);
  if (!(tolerance > 0 && tolerance < 1)) throw new UsageError(`--tolerance must be between 0 and 1, got ${v.tolerance}`);
  const store = v.store ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'es') throw new UsageError(`--store must be sqlite or es, got ${store}`);
  const o = {
    store: store as Options['store'],
    days: positiveInt('--days', v.days, 30),
    retentionDays: positiveInt('--retention-days', v['retention-days'], 7),
    minutes: positiveInt('--minutes', v.minutes, 6),
    perMinute: positiveInt('--per-minute', v['per-minute'], 30),
    tolerance,
    out: outOption(v.out) ?? 'bench/out/soak',
    json: v.json === true,
  };
  if (o.days < o.retentionDays + 2) throw new UsageError(`--days must be at least --retention-days + 2 (${o.retentionDays + 2})`);
  return o;
}

async function main(): Promise<void> {
  let o: Options | undefined;
  try {
    o = options(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    say(err.message);
    process.exitCode = 2;
    return;
  }
  if (!o) return;
  const out = resolve(o.out);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const file = join(out, 'soak.db');
  const es = o.store === 'es' ? await startBenchElasticsearch(say) : undefined;
  const redis = await ensureRedis({ url: process.env.REDIS_URL || undefined });
  const log = createLogger('silent');
  const config = loadConfig({
    env: {},
    flags: {
      redisUrl: redis.url,
      queuePrefix: `soak-${process.pid}`,
      store: es ? `es:${es.url}` : `sqlite:${file}`,
      retention: { days: o.retentionDays, stepRows: 2000 },
      ...(es ? { elasticsearch: { indexPrefix: es.prefix, ...es.auth } } : {}),
    },
  });
  let clockMs = T0 * 1000;
  const now = (): number => clockMs;
  const store = openStore(config.store, { ...config, now });
  const queues = createQueues(redis.url, config, log);
  const realStart: number[] = [];
  const figures: DayFigures[] = [];
  const failures: string[] = [];
  let keysAtFull = new Map<string, number>();
  try {
    for (let d = 0; d < o.days; d++) {
      realStart[d] = Date.now();
      const start = msToMinute((T0 + d * DAY + 3600) * 1000);
      const feed = join(out, 'feed', `day-${d}`);
      await writeFeed({ out: feed, seed: `soak-${d}`, start, minutes: o.minutes, perMinute: o.perMinute, malformedRate: 0.02, bigRate: 0 });
      const minutes: MinuteId[] = Array.from({ length: o.minutes }, (_, i) => addMinutes(start, i));
      // the end of the simulated day: what retention and the index stage take for now
      clockMs = (T0 + (d + 1) * DAY) * 1000;
      const run = await superviseWorkers({
        redisUrl: redis.url,
        config,
        store,
        queues,
        log,
        kind: 'single thread',
        now,
        task: (signal, parts) => runBackfill({ queues, store, sourceSpec: `dir:${feed}`, minutes, signal, log, pause: parts.pause }),
      });
      if (run.fatal) throw run.fatal;
      const summary = run.result;
      if (!summary || summary.batches.failed + summary.batches.pending > 0) {
        failures.push(`day ${d + 1}: the backfill did not finish: ${JSON.stringify(summary?.failures ?? 'no summary')}`);
        break;
      }
      for (;;) {
        const r = await store.retention.prune({ ...retentionCutoffs(config.retention, clockMs), maxRows: config.retention.stepRows });
        if (r.done) break;
      }
      // completed jobs older than the window go, as BullMQ's age rule would remove them
      const first = d - o.retentionDays + 1;
      if (first > 0) {
        const grace = Date.now() - (realStart[first] as number);
        for (const q of [queues.feed, queues.index]) await q.clean(grace, 0, 'completed');
      }
      const f = await dayFigures(d, es ? await esStore(es) : sqliteStore(file), store, queues.connection, config.queuePrefix);
      figures.push(f);
      say(
        `day ${f.day} (${f.date}): store ${f.storeMB} MB, ${f.partitions} day partitions, Redis ${f.redisMB} MB / ${f.redisKeys} keys, ${f.behaviours} behaviours, ${f.deadLetters} dead letters`,
      );
      if (d === keysDay(o)) keysAtFull = await keySizes(queues.connection, config.queuePrefix);
    }
    const top = [...(await keySizes(queues.connection, config.queuePrefix)).entries()].sort((a, b) => b[1] - a[1]);
    failures.push(...flatness(figures, o, keysAtFull, new Map(top)));
    const report = { days: o.days, retentionDays: o.retentionDays, figures, topKeys: top.slice(0, 10), failures };
    if (o.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      process.stdout.write(
        `Redis's ten largest keys at the end:\n${top
          .slice(0, 10)
          .map(([k, b]) => `  ${b} B  ${k}`)
          .join('\n')}\n`,
      );
      process.stdout.write(failures.length === 0 ? 'flat: the store and Redis held steady once the window was full\n' : '');
    }
    for (const f of failures) say(`FAILED: ${f}`);
    if (failures.length > 0) process.exitCode = 1;
  } finally {
    await closeQueues(queues, log);
    await store.close();
    await redis.stop();
    if (es) {
      await es.drop();
      await es.stop();
    }
  }
}

/** The store's size on disk and its day partitions. */
interface StoreSize {
  bytes: number;
  partitions: number;
}

/** A SQLite store: the file (its write-ahead log folded in) and its day tables. */
function sqliteStore(file: string): StoreSize {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const partitions = db
      .prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name GLOB 'behaviours_[0-9]*'")
      .pluck()
      .get() as number;
    return { bytes: statSync(file).size, partitions };
  } finally {
    db.close();
  }
}

/** An Elasticsearch store: the primary segments of its behaviour partitions and locator, and its day indices. */
async function esStore(es: BenchElasticsearch): Promise<StoreSize> {
  const c = es.admin;
  await c.indices.refresh({ index: `${es.prefix}-*` });
  const r = await c.indices.segments({ index: [`${es.prefix}-behaviours-*`, `${es.prefix}-locator`] });
  let bytes = 0;
  for (const i of Object.values(r.indices ?? {})) {
    for (const copies of Object.values(i.shards ?? {})) {
      for (const copy of [copies].flat() as { routing?: { primary?: boolean }; segments?: Record<string, { size_in_bytes?: number }> }[]) {
        if (copy.routing?.primary !== true) continue;
        for (const seg of Object.values(copy.segments ?? {})) bytes += seg.size_in_bytes ?? 0;
      }
    }
  }
  const days = Object.keys(await c.indices.getAlias({ name: `${es.prefix}-behaviours` })).filter((i) => /\d{4}\.\d{2}\.\d{2}$/.test(i));
  return { bytes, partitions: days.length };
}

/** The store's and Redis's figures at the end of a simulated day. */
async function dayFigures(
  d: number,
  size: StoreSize,
  store: ReturnType<typeof openStore>,
  redis: ReturnType<typeof createQueues>['connection'],
  prefix: string,
): Promise<DayFigures> {
  const { partitions } = size;
  const info = await redis.info('memory');
  const used = Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
  return {
    day: d + 1,
    date: new Date((T0 + d * DAY) * 1000).toISOString().slice(0, 10),
    storeMB: mb(size.bytes),
    partitions,
    redisMB: mb(used),
    redisKeys: (await keySizes(redis, prefix)).size,
    behaviours: await store.sink.count(),
    deadLetters: await store.dlq.count(),
  };
}

/** Every key of the run's prefix with its MEMORY USAGE in bytes. */
async function keySizes(redis: ReturnType<typeof createQueues>['connection'], prefix: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) sizes.set(k, Number((await redis.memory('USAGE', k)) ?? 0));
  } while (cursor !== '0');
  return sizes;
}

/**
 * The day (index) whose Redis keys are compared with the last day's: one retention window before
 * the end, and never before the window was full. A key bigger at the end grew through a whole
 * window of steady state: a key that is capped (a trimmed stream) has stopped by then.
 */
const keysDay = (o: Options): number => Math.max(o.retentionDays, o.days - 1 - o.retentionDays);

/** What grew once the window was full. */
function flatness(
  figures: readonly DayFigures[],
  o: Options,
  atFull: ReadonlyMap<string, number>,
  atEnd: ReadonlyMap<string, number>,
): string[] {
  const out: string[] = [];
  const ref = figures[o.retentionDays];
  if (!ref) return [`only ${figures.length} days ran: no figure once the window was full`];
  for (const f of figures.slice(o.retentionDays + 1)) {
    for (const [what, a, b] of [
      ['store size', ref.storeMB, f.storeMB],
      ['Redis memory', ref.redisMB, f.redisMB],
    ] as const) {
      if (Math.abs(b - a) > o.tolerance * a)
        out.push(`day ${f.day}: ${what} ${b} MB, not within ${o.tolerance * 100}% of day ${ref.day}'s ${a} MB`);
    }
  }
  for (const [key, size] of atEnd) {
    const before = atFull.get(key);
    // a key that grows with the days (4 KiB of slack for encodings)
    if (before !== undefined && size > before * (1 + o.tolerance) && size - before > 4096) {
      out.push(`Redis key ${key} grew from ${before} to ${size} bytes between day ${keysDay(o) + 1} and day ${figures.length}`);
    }
  }
  return out;
}

const mb = (bytes: number): number => Math.round((bytes / 1024 ** 2) * 100) / 100;

await main().catch((err: unknown) => {
  say(`FAILED: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
});
