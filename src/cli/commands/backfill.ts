import { SandtrailError } from '../../errors/index.js';
import { createSource } from '../../feed/index.js';
import { artefactStage } from '../../artefacts/index.js';
import {
  closeQueues,
  createQueues,
  runBackfill,
  startProcessOps,
  superviseWorkers,
  type ArtefactChoice,
  type BackfillSummary,
} from '../../queue/index.js';
import { ensureRedis } from '../../redis/index.js';
import { openStore } from '../../store/index.js';
import type { CliContext } from '../context.js';
import { createProgressReporter } from '../progress.js';
import { isMinuteId, minuteRange, type MinuteId } from '../../minute/index.js';

export interface BackfillArgs {
  source: string;
  from?: string;
  to?: string;
  workers?: boolean;
  /** Whole hours of the range come from hourly packages. */
  hourly?: boolean;
  /** Artefacts to download through the feed lines' links. */
  artefacts?: ArtefactChoice;
}

export interface BackfillRun {
  minutes: MinuteId[];
  summary: BackfillSummary;
  sink: string;
  /** Stopped by SIGINT/SIGTERM before the range was done. */
  signalled?: boolean;
}

/** Exit status of a backfill: 0 all done, 1 a batch failed, 130 interrupted by a signal. */
export function backfillExitCode(run: BackfillRun): number {
  if (run.summary.batches.failed > 0) return 1;
  return run.signalled || run.summary.batches.pending > 0 ? 130 : 0;
}

/** Resolves the minutes of a backfill: the given range, or every minute between the first and last found. */
export async function resolveMinutes(
  sourceSpec: string,
  from: string | undefined,
  to: string | undefined,
  ctx: CliContext,
): Promise<MinuteId[]> {
  for (const [flag, v] of [
    ['--from', from],
    ['--to', to],
  ] as const) {
    if (v !== undefined && !isMinuteId(v)) throw new SandtrailError('USAGE', `${flag} must be a UTC minute YYYYMMDDhhmm, got "${v}"`);
  }
  if (from && to) {
    if (from > to) throw new SandtrailError('USAGE', `--from ${from} is after --to ${to}`);
    return [...minuteRange(from, to)];
  }
  if (sourceSpec === 'api') throw new SandtrailError('USAGE', 'the api source needs both --from and --to');
  const found = await createSource(sourceSpec, { decoder: ctx.config.feed.decoder }).listMinutes({ from, to });
  const first = from ?? found[0];
  const last = to ?? found[found.length - 1];
  // gaps inside the found span are real missing minutes and get reported as such
  return first && last ? [...minuteRange(first, last)] : [];
}

/**
 * Runs a backfill through the real queue: enqueue, process with in-process workers (plus any
 * fleet workers on the same Redis), wait for everything, summarize from the durable store.
 */
export async function runBackfillCommand(args: BackfillArgs, ctx: CliContext): Promise<BackfillRun> {
  const { config, log } = ctx;
  const minutes = await resolveMinutes(args.source, args.from, args.to, ctx);
  const redis = await ensureRedis({ url: config.redisUrl, log });
  const store = openStore(config.store, config);
  const queues = createQueues(redis.url, config, log);
  let closeStage: (() => Promise<void>) | undefined;
  let closeOps: (() => Promise<void>) | undefined;
  try {
    const sourceSpec = args.source === 'api' ? 'api' : createSource(args.source).spec;
    if (sourceSpec === 'api' && !config.gti.apiKey) throw new SandtrailError('USAGE', 'the api source needs GTI_APIKEY');
    const progress = createProgressReporter();
    const stage = artefactStage({ redisUrl: redis.url, config, store, queues, log });
    closeStage = stage.close;
    // with http.port set, a long backfill can be watched like a worker: /metrics, /queues
    const ops = await startProcessOps({ config, log, store, queues });
    closeOps = ops.close;
    // first signal: stop waiting, let the active jobs finish, print the summary; second: force
    const out = await superviseWorkers({
      redisUrl: redis.url,
      config,
      store,
      queues,
      log,
      stages: args.workers === false ? [] : ['feed', 'index'],
      indexInThread: true,
      producers: (onFatal) => (args.workers === false ? [] : [stage.worker(onFatal)]),
      onFeedDoc: stage.onFeedDoc,
      onDraining: () => ops.draining(),
      task: async (signal) => {
        const summary = await runBackfill({
          queues,
          store,
          sourceSpec,
          minutes,
          hourly: args.hourly,
          artefacts: args.artefacts,
          onProgress: progress.update,
          signal,
          log,
        });
        // downloads run apart from indexing; the command ends once they are over too
        if (args.artefacts) summary.artefacts = await stage.settle(signal);
        return summary;
      },
    });
    progress.done();
    if (out.fatal) throw out.fatal;
    const summary = out.result as BackfillSummary;
    return { minutes, summary, sink: store.spec, signalled: out.signalled };
  } finally {
    await closeOps?.().catch(() => undefined);
    await closeStage?.().catch(() => undefined);
    await closeQueues(queues, log);
    await store.close();
    await redis.stop();
  }
}

/** Failed minutes listed in the human summary (all of them are in --json). */
const SHOWN_FAILURES = 10;

/** Human-readable summary lines. */
export function formatSummary(run: BackfillRun): string {
  const { batches: b, records: r, failures } = run.summary;
  const span = run.minutes.length ? `${run.minutes[0]}..${run.minutes[run.minutes.length - 1]}` : '(no batches)';
  const lines = [
    `backfill ${span}: ${run.minutes.length} minute(s) into ${run.sink}${run.summary.interrupted ? ' (interrupted)' : ''}`,
    `  batches: ${b.ok} ok, ${b.empty} empty, ${b.missing} missing, ${b.failed} failed${b.pending ? `, ${b.pending} unfinished` : ''}`,
    `  records: ${r.indexed} indexed, ${r.rejected} rejected${r.rejected ? ' (see: sandtrail dlq list)' : ''}`,
    `  API units spent: ${run.summary.api_units}`,
  ];
  const a = run.summary.artefacts;
  if (a)
    lines.push(
      `  artefacts: ${a.completed} downloaded, ${a.failed} failed${a.open ? `, ${a.open} still queued` : ''} (artefact queue, kept a week)`,
    );
  if (run.summary.requeued) lines.push(`  queue state lost and rebuilt: ${run.summary.requeued} feed job(s) enqueued again`);
  for (const f of failures.slice(0, SHOWN_FAILURES)) lines.push(`  ${f.status} ${f.batch}: ${f.reason}`);
  if (failures.length > SHOWN_FAILURES) lines.push(`  ... and ${failures.length - SHOWN_FAILURES} more (--json lists all)`);
  return lines.join('\n');
}
