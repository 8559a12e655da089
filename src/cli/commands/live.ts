import { SandtrailError } from '../../errors/index.js';
import { createSource } from '../../feed/index.js';
import {
  closeQueues,
  createQueues,
  formatCursor,
  parseCursor,
  Scheduler,
  startProcessOps,
  superviseWorkers,
  type ProcessOps,
} from '../../queue/index.js';
import { ensureRedis } from '../../redis/index.js';
import { openStore, type BatchLogEntry } from '../../store/index.js';
import { artefactStage } from '../../artefacts/index.js';
import { artefactChoiceOf } from '../artefactChoice.js';
import type { ArtefactFlags } from '../artefactFlags.js';
import { writeOut, type CliContext } from '../context.js';
import { addMinutes, isMinuteId, minuteToMs } from '../../minute/index.js';

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
  const lagMinutes = opts.lagMinutes !== undefined ? Number(opts.lagMinutes) : config.live.lagMinutes;
  if (!Number.isInteger(lagMinutes) || lagMinutes < 0) throw new SandtrailError('USAGE', '--lag-minutes must be a whole number of minutes');
  const sourceSpec = opts.source === 'api' ? 'api' : createSource(opts.source).spec;
  if (sourceSpec === 'api' && !config.gti.apiKey) throw new SandtrailError('USAGE', 'the api source needs GTI_APIKEY');
  if (!config.redisUrl) log.warn('no REDIS_URL: using a private Redis, so the cursor is lost when this process ends');
  const redis = await ensureRedis({ url: config.redisUrl, log });
  const store = openStore(config.store, config);
  const queues = createQueues(redis.url, config, log);
  const scheduler = new Scheduler({
    queues,
    store,
    prefix: config.queuePrefix,
    sourceSpec,
    log,
    lagMs: lagMinutes * 60_000,
    tickMs: config.live.tickMs,
    start,
    artefacts,
  });
  const workerOpts = { redisUrl: redis.url, config, store, queues, log };
  // the feed hook always runs (jobs of a fleet scheduler may ask for artefacts); the downloads with it
  const stage = artefactStage(workerOpts);
  let out;
  let ops: ProcessOps | undefined;
  try {
    ops = await startProcessOps({ config, log, store, queues });
    log.info({ source: sourceSpec, sink: store.spec, lagMinutes, http: ops.url ?? null }, 'live ingestion started');
    out = await superviseWorkers({
      redisUrl: redis.url,
      config,
      store,
      queues,
      log,
      stages: ['feed', 'index'],
      scheduler,
      indexInThread: true,
      producers: (onFatal) => [stage.worker(onFatal)],
      onFeedDoc: stage.onFeedDoc,
      onDraining: () => ops?.draining(),
    });
  } finally {
    await ops?.close();
    await stage.close().catch(() => undefined);
    await closeQueues(queues, log);
    await store.close();
    await redis.stop();
  }
  if (out.fatal) throw out.fatal;
  return out.forced ? 130 : 0;
}

export interface StatusReport {
  cursor: string | null;
  scheduled: string | null;
  lag_seconds: number | null;
  queues: { feed: Record<string, number>; index: Record<string, number> };
  recent_batches: Pick<BatchLogEntry, 'batch' | 'status' | 'accepted' | 'rejected' | 'error'>[];
  gaps: string[];
  alerts: string[];
  dead_letters: number;
}

/** `sandtrail status`: cursor, lag, queue depths, recent batches, gaps and dead letters. */
export async function statusCommand(opts: { json?: boolean; last?: string }, ctx: CliContext): Promise<number> {
  const { config } = ctx;
  if (!config.redisUrl) throw new SandtrailError('USAGE', 'status reads the shared Redis: set REDIS_URL');
  const last = opts.last ? Number(opts.last) : 10;
  const store = openStore(config.store, config);
  const queues = createQueues(config.redisUrl, config);
  try {
    const { cursor, scheduled } = await Scheduler.pointers(queues, config.queuePrefix);
    const counts = ['waiting', 'active', 'delayed', 'failed', 'completed'] as const;
    // lookups share the batch log under lookup-<hash> keys; status is about feed minutes
    const recent = (await store.batches.recent(Math.max(last, 1440))).filter((e) => isMinuteId(e.batch));
    const missing = recent
      .filter((e) => e.status === 'missing')
      .map((e) => e.batch)
      .sort();
    const alerts: string[] = [];
    const newest = [...recent].sort((a, b) => b.batch.localeCompare(a.batch));
    for (const run of missingRuns(missing)) {
      if (run.length >= config.feed.missingAlertMinutes)
        alerts.push(`${run.length} consecutive minutes missing: ${run[0]} to ${run[run.length - 1]}`);
    }
    const failed = recent.filter((e) => e.status === 'failed').length;
    if (failed) alerts.push(`${failed} failed batch(es) in the last ${recent.length}`);
    const report: StatusReport = {
      cursor: cursor ? formatCursor({ minute: addMinutes(cursor, 1), consumed: 0 }) : null,
      scheduled,
      // lag: now minus the end of the newest fully processed minute
      lag_seconds: cursor ? Math.round((Date.now() - minuteToMs(cursor) - 60_000) / 1000) : null,
      queues: { feed: await queues.feed.getJobCounts(...counts), index: await queues.index.getJobCounts(...counts) },
      recent_batches: newest
        .slice(0, last)
        .map(({ batch, status, accepted, rejected, error }) => ({ batch, status, accepted, rejected, error })),
      gaps: missing,
      alerts,
      dead_letters: await store.dlq.count(),
    };
    if (opts.json) {
      await writeOut(`${JSON.stringify(report)}\n`);
    } else {
      const q = (c: Record<string, number>): string => counts.map((k) => `${k} ${c[k] ?? 0}`).join(', ');
      await writeOut(
        [
          `cursor: ${report.cursor ?? '(none)'}   scheduled through: ${report.scheduled ?? '(none)'}`,
          `lag: ${report.lag_seconds === null ? '-' : `${report.lag_seconds} s`}`,
          `feed queue: ${q(report.queues.feed)}`,
          `index queue: ${q(report.queues.index)}`,
          `dead letters: ${report.dead_letters}`,
          `gaps (missing minutes): ${report.gaps.length ? report.gaps.join(' ') : 'none'}`,
          ...report.alerts.map((a) => `ALERT: ${a}`),
          'recent batches:',
          ...report.recent_batches.map(
            (b) => `  ${b.batch} ${b.status.padEnd(7)} ${b.accepted} indexed, ${b.rejected} rejected${b.error ? `  ${b.error}` : ''}`,
          ),
        ].join('\n') + '\n',
      );
    }
    return 0;
  } finally {
    await queues.close();
    await store.close();
  }
}

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
