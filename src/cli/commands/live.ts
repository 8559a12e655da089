import { setTimeout as sleep } from 'node:timers/promises';
import { SandtrailError } from '../../errors/index.js';
import { createSource } from '../../feed/index.js';
import { checkRedis, createQueues, formatCursor, parseCursor, Scheduler, redactUrl, type Queues } from '../../queue/index.js';
import { closeProcess, closeQueues, startProcessOps, superviseWorkers, type ProcessOps } from '../../runner/index.js';
import { ingestFreshness, openStore, type BatchLogEntry, type RetentionDays } from '../../store/index.js';
import { clusterLine, clusterStatus, type ClusterStatus } from './clusterStatus.js';
import { artefactChoiceOf } from '../artefactChoice.js';
import type { ArtefactFlags } from '../artefactFlags.js';
import { writeOut, type CliContext } from '../context.js';
import { openStoreAndRedis } from '../storeAndRedis.js';
import { countFlag, lagMinutesFlag } from '../countFlag.js';
import { addMinutes } from '../../minute/index.js';

/**
 * `sandtrail run`: live ingestion. A scheduler enqueues each minute once it can be published,
 * from the cursor saved in Redis; feed and index workers run in the same process (more can join
 * from other machines on the same Redis). First signal drains, second forces.
 */
export async function runCommand(
  opts: { source: string; start?: string; lagMinutes?: string } & ArtefactFlags,
  ctx: CliContext,
): Promise<number> {
  const artefacts = artefactChoiceOf(opts);
  const { config, log } = ctx;
  const start = opts.start ? parseCursor(opts.start) : undefined;
  const lagMinutes = lagMinutesFlag(opts.lagMinutes, config.live.lagMinutes);
  const source = opts.source === 'api' ? undefined : createSource(opts.source);
  const sourceSpec = source?.spec ?? 'api';
  if (sourceSpec === 'api' && !config.gti.apiKey) throw new SandtrailError('USAGE', 'the api source needs GTI_APIKEY');
  // a feed directory that cannot be read would fail every minute: said once, before anything starts
  // (an empty one is fine: a mirror fills it)
  await source?.listMinutes();
  // the store before Redis: a wrong --store ends the command here, before a private Redis is started
  const { store, redis } = await openStoreAndRedis(ctx);
  if (redis.isPrivate) log.warn('no REDIS_URL: using a private Redis, so the cursor is lost when this process ends');
  const queues = createQueues(redis.url, config, log);
  const scheduler = new Scheduler({
    queues,
    store,
    prefix: config.queuePrefix,
    sourceSpec,
    log,
    lagMs: lagMinutes * 60_000,
    tickMs: config.live.tickMs,
    retryFailedMs: config.live.retryFailedMs,
    start,
    artefacts,
  });
  let out;
  let ops: ProcessOps | undefined;
  const started = Date.now();
  try {
    ops = await startProcessOps({ config, log, store, queues });
    log.info({ source: sourceSpec, sink: store.spec, lagMinutes, http: ops.url ?? null }, 'live ingestion started');
    out = await superviseWorkers({
      redisUrl: redis.url,
      privateRedis: redis.isPrivate,
      config,
      store,
      queues,
      log,
      // the feed hook always runs (jobs of a fleet scheduler may ask for artefacts); the downloads with it
      kind: 'run',
      scheduler,
      onDraining: () => ops?.draining(),
    });
  } finally {
    await closeProcess({ log, forced: out?.forced, ops, queues, store, redis });
  }
  log.info({ forced: out.forced, ms: Date.now() - started }, 'live ingestion stopped');
  if (out.fatal) throw out.fatal;
  return out.forced ? 130 : 0;
}

export interface StatusReport {
  /** Null without REDIS_URL: the live cursor is kept in Redis. */
  cursor: string | null;
  scheduled: string | null;
  /** Now minus the end of the newest minute through which every minute is done (the live cursor, else the batch log). */
  lag_seconds: number | null;
  /** Null without REDIS_URL: the queues live in Redis. */
  queues: { feed: Record<string, number>; index: Record<string, number> } | null;
  recent_batches: Pick<BatchLogEntry, 'batch' | 'status' | 'accepted' | 'rejected' | 'error'>[];
  gaps: string[];
  alerts: string[];
  dead_letters: number;
  /** The retention setting and the oldest behaviour held (null when the store holds none). */
  retention: { days: RetentionDays; oldest_behaviour: string | null };
  /**
   * Elasticsearch: the cluster's colour, nodes and the store's unassigned shards (`allowed: false`
   * without the monitor privilege); null for a SQLite store.
   */
  cluster: ClusterStatus | null;
}

/** How long status waits for Redis, to connect and for its reads, before saying it cannot reach it. */
const STATUS_REDIS_TIMEOUT_MS = 5000;

/** `p`, or a REDIS_UNAVAILABLE error naming the URL (password hidden) once `ms` have passed. */
async function fromRedis<T>(p: Promise<T>, url: string, ms = STATUS_REDIS_TIMEOUT_MS): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      p,
      sleep(ms, undefined, { signal: timer.signal }).then(() => {
        throw new SandtrailError('REDIS_UNAVAILABLE', `cannot reach Redis at ${redactUrl(url)}: no answer within ${ms} ms`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}

/**
 * `sandtrail status`: cursor, lag, queue depths, recent batches, gaps and dead letters. The batch
 * log and the dead letters are read from the store; the cursor and the queue depths from Redis,
 * only when REDIS_URL names one (a private Redis is gone with the command that started it).
 */
export async function statusCommand(opts: { json?: boolean; last?: string }, ctx: CliContext): Promise<number> {
  const { config } = ctx;
  const last = countFlag('--last', opts.last, 10, { min: 0, max: 100_000 });
  const store = openStore(config.store, config, { readOnly: true });
  const redisUrl = config.redisUrl;
  let queues: Queues | undefined;
  try {
    // a cluster out of reach, or holding no store under this prefix, is said as such, not as an empty log
    await store.check();
    if (redisUrl) {
      // the rights the pipeline's user needs, named with their grant, before the raw NOPERM of a read
      await checkRedis(redisUrl, {
        redisCluster: config.redisCluster,
        timeoutMs: STATUS_REDIS_TIMEOUT_MS,
        prefix: config.queuePrefix,
        onWarning: (m) => ctx.log.warn(m),
      });
      queues = createQueues(redisUrl, config);
    }
    const counts = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;
    const q = queues;
    const { cursor, scheduled } =
      q && redisUrl ? await fromRedis(Scheduler.pointers(q, config.queuePrefix), redisUrl) : { cursor: null, scheduled: null };
    const depths =
      q && redisUrl ? await fromRedis(Promise.all([q.feed.getJobCounts(...counts), q.index.getJobCounts(...counts)]), redisUrl) : undefined;
    // lookups share the batch log under lookup-<hash> keys; status is about feed minutes. The live
    // cursor when a scheduler keeps one; else the batch log says how far every minute is done
    const fresh = await ingestFreshness(store.batches, { minutes: Math.max(last, 1440), cursor });
    const { recent, missing } = fresh;
    const alerts: string[] = [];
    const newest = recent;
    for (const run of missingRuns(missing)) {
      if (run.length >= config.feed.missingAlertMinutes)
        alerts.push(`${run.length} consecutive minutes missing: ${run[0]} to ${run[run.length - 1]}`);
    }
    const days = config.retention.days;
    const oldest = await store.retention.oldest();
    // a day past the cutoff: the steps of the index workers would have removed it by now
    if (days !== 'off' && oldest !== null && oldest < Date.now() / 1000 - (days + 1) * 86_400) {
      alerts.push(
        `retention: behaviours last modified on ${isoDay(oldest)} are still held, more than ${days} days ago: is an index worker running? (or sandtrail prune)`,
      );
    }
    const failed = fresh.failed.length;
    if (failed) alerts.push(`${failed} failed batch(es) in the last ${recent.length}`);
    const cluster = await clusterStatus(store);
    // red: some of the store's data cannot be read or written; yellow: a node lost now would lose data
    if (cluster?.allowed && cluster.status !== 'green') alerts.push(`Elasticsearch cluster ${clusterLine(cluster)}`);
    const report: StatusReport = {
      cursor: cursor ? formatCursor({ minute: addMinutes(cursor, 1), consumed: 0 }) : null,
      scheduled,
      // lag: now minus the end of the newest fully processed minute
      lag_seconds: fresh.lagSeconds,
      queues: depths ? { feed: depths[0], index: depths[1] } : null,
      recent_batches: newest
        .slice(0, last)
        .map(({ batch, status, accepted, rejected, error }) => ({ batch, status, accepted, rejected, error })),
      gaps: missing,
      alerts,
      dead_letters: await store.dlq.count(),
      retention: { days, oldest_behaviour: oldest === null ? null : new Date(oldest * 1000).toISOString() },
      cluster,
    };
    if (opts.json) {
      await writeOut(`${JSON.stringify(report)}\n`);
    } else {
      // index jobs are removed once done (their chunk's mark in the store says it): no completed count to show
      const line = (c: Record<string, number>, kept: readonly string[] = counts): string => kept.map((k) => `${k} ${c[k] ?? 0}`).join(', ');
      const noRedis = "set REDIS_URL to the pipeline's Redis to see them";
      await writeOut(
        [
          redisUrl
            ? `cursor: ${report.cursor ?? '(none)'}   scheduled through: ${report.scheduled ?? '(none)'}`
            : `cursor: - (the live cursor and the queue figures are kept in Redis: ${noRedis})`,
          `lag: ${report.lag_seconds === null ? '-' : `${report.lag_seconds} s${report.lag_seconds >= 120 ? ` (${longDuration(report.lag_seconds)})` : ''}`}`,
          `feed queue: ${report.queues ? line(report.queues.feed) : '-'}`,
          `index queue: ${
            report.queues
              ? line(
                  report.queues.index,
                  counts.filter((k) => k !== 'completed'),
                )
              : '-'
          }`,
          `dead letters: ${report.dead_letters}`,
          ...(report.cluster ? [`cluster: ${clusterLine(report.cluster)}`] : []),
          `retention: ${days === 'off' ? 'off (everything is kept)' : `${days} days`}; oldest behaviour last modified ${report.retention.oldest_behaviour ?? '-'}`,
          `gaps (missing minutes): ${report.gaps.length ? missingRuns(report.gaps).map(spanOf).join(', ') : 'none'}`,
          ...report.alerts.map((a) => `ALERT: ${a}`),
          // --last 0 asks for none: no heading over nothing
          ...(report.recent_batches.length ? ['recent batches:'] : []),
          ...report.recent_batches.map(
            // a minute not stored whole read its records, it did not index them
            (b) =>
              `  ${b.batch} ${b.status.padEnd(7)} ${b.accepted} ${b.status === 'ok' ? 'indexed' : 'read'}, ${b.rejected} rejected${b.error ? `  ${b.error}` : ''}`,
          ),
        ].join('\n') + '\n',
      );
    }
    return 0;
  } finally {
    if (queues) await closeQueues(queues, ctx.log);
    await store.close();
  }
}

/** A run of missing minutes as status prints it: the minute, or its first and last and how many. */
const spanOf = (run: readonly string[]): string =>
  run.length === 1 ? (run[0] as string) : `${run[0]} to ${run[run.length - 1]} (${run.length} minutes)`;

/** A lag of minutes or more, in days, hours and minutes (`25 d 12 h 47 min`). */
function longDuration(sec: number): string {
  const parts: [number, string][] = [
    [Math.floor(sec / 86_400), 'd'],
    [Math.floor((sec % 86_400) / 3600), 'h'],
    [Math.floor((sec % 3600) / 60), 'min'],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, u]) => `${n} ${u}`)
    .join(' ');
}

/** The UTC day of a Unix time, YYYY-MM-DD. */
const isoDay = (sec: number): string => new Date(sec * 1000).toISOString().slice(0, 10);

/** Groups sorted missing minutes into runs of consecutive minutes. */
export function missingRuns(sorted: readonly string[]): string[][] {
  const runs: string[][] = [];
  for (const m of sorted) {
    const last = runs[runs.length - 1];
    if (last && addMinutes(last[last.length - 1] as string, 1) === m) last.push(m);
    else runs.push([m]);
  }
  return runs;
}
