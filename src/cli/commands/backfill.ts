import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode, isStoreFault, messageOf, SandtrailError } from '../../errors/index.js';
import { BATCH_FILE_NAMES, createSource, HOURLY_PACKAGE_NAME } from '../../feed/index.js';
import {
  closeQueues,
  recordFailures,
  startProcessOps,
  superviseWorkers,
  waitForBackfill,
  type BackfillOutcome,
  type BackfillSummary,
} from '../../runner/index.js';
import { createQueues, type ArtefactChoice } from '../../queue/index.js';
import type { CliContext } from '../context.js';
import { openStoreAndRedis } from '../storeAndRedis.js';
import { dlqListCommand } from '../dlqListCommand.js';
import { createProgressReporter } from '../progress.js';
import { isMinuteId, minuteRange, type MinuteId } from '../../minute/index.js';
import type { Logger } from '../../log/index.js';

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

/** The minutes of a backfill, and those of a directory source found with a batch file. */
export interface ResolvedMinutes {
  minutes: MinuteId[];
  /** Minutes whose file the directory holds (not for the api source nor hourly packages). */
  present?: ReadonlySet<MinuteId>;
}

/**
 * Resolves the minutes of a backfill: the given range, or every minute between the first and last
 * found. A directory with no batch file (in the range) is an error naming it and the file names
 * it should hold: a backfill with nothing to do is a wrong --source, not a success.
 */
export async function resolveMinutes(
  sourceSpec: string,
  from: string | undefined,
  to: string | undefined,
  ctx: CliContext,
  hourly = false,
): Promise<ResolvedMinutes> {
  for (const [flag, v] of [
    ['--from', from],
    ['--to', to],
  ] as const) {
    if (v !== undefined && !isMinuteId(v)) throw new SandtrailError('USAGE', `${flag} must be a UTC minute YYYYMMDDhhmm, got "${v}"`);
  }
  if (from && to && from > to) throw new SandtrailError('USAGE', `--from ${from} is after --to ${to}`);
  if (sourceSpec === 'api') {
    if (from && to) return { minutes: [...minuteRange(from, to)] };
    throw new SandtrailError('USAGE', 'the api source needs both --from and --to');
  }
  const source = createSource(sourceSpec, { decoder: ctx.config.feed.decoder });
  const all = await source.listMinutes();
  const dir = source.spec.slice('dir:'.length);
  if (all.length === 0) {
    const names = await readdir(dir).catch(() => [] as string[]);
    // hourly packages are not listed by minute: with --hourly the range says which hours to read
    if (hourly && from && to && names.some((n) => HOURLY_PACKAGE_NAME.test(n))) return { minutes: [...minuteRange(from, to)] };
    throw noBatches(dir, names);
  }
  // a fleet worker that finds none of these files reads another directory
  const present = hourly ? undefined : new Set(all);
  if (from && to) return { minutes: [...minuteRange(from, to)], present };
  const found = all.filter((m) => (!from || m >= from) && (!to || m <= to));
  const first = from ?? found[0];
  const last = to ?? found[found.length - 1];
  if (!first || !last || first > last) {
    const range = from ? `from ${from}` : `up to ${to}`;
    throw new SandtrailError(
      'SOURCE_NOT_FOUND',
      `no feed batches in ${dir} ${range}: its ${all.length} batch file(s) span ${all[0]} to ${all[all.length - 1]}`,
    );
  }
  // gaps inside the found span are real missing minutes and get reported as such
  return { minutes: [...minuteRange(first, last)], present };
}

/** The error of a feed directory holding no batch file: what it holds, and what it should. */
function noBatches(dir: string, names: readonly string[]): SandtrailError {
  const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ', ...' : '');
  const holds = names.length === 0 ? 'it is empty' : `none of its ${names.length} entries is named by a minute (${shown})`;
  const packages = names.some((n) => HOURLY_PACKAGE_NAME.test(n))
    ? `; its hourly packages (YYYYMMDDhh.tar.bz2) are read with --hourly and both --from and --to`
    : '';
  return new SandtrailError(
    'SOURCE_NOT_FOUND',
    `no feed batches in ${dir}: ${holds}; a directory source reads ${BATCH_FILE_NAMES}${packages}`,
    {
      dir,
    },
  );
}

/**
 * Runs a backfill through the real queue: enqueue, process with in-process workers (plus any
 * fleet workers on the same Redis), wait for everything, summarize from the durable store.
 */
export async function runBackfillCommand(args: BackfillArgs, ctx: CliContext): Promise<BackfillRun> {
  const { config, log } = ctx;
  const { minutes, present } = await resolveMinutes(args.source, args.from, args.to, ctx, args.hourly);
  const sourceSpec = args.source === 'api' ? 'api' : createSource(args.source).spec;
  if (sourceSpec === 'api' && !config.gti.apiKey) throw new SandtrailError('USAGE', 'the api source needs GTI_APIKEY');
  // the store before Redis: a wrong --store ends the command here, before a private Redis is started
  const { store, redis } = await openStoreAndRedis(ctx);
  const queues = createQueues(redis.url, config, log);
  // this run's downloads are counted apart from the week of them the queue keeps
  const artefacts = args.artefacts ? { ...args.artefacts, run: randomUUID() } : undefined;
  let closeOps: (() => Promise<void>) | undefined;
  try {
    const progress = createProgressReporter();
    // with http.port set, a long backfill can be watched like a worker: /metrics, /queues
    const ops = await startProcessOps({ config, log, store, queues });
    closeOps = ops.close;
    // first signal: stop waiting, let the active jobs finish, print the summary; second: force
    const out = await superviseWorkers({
      redisUrl: redis.url,
      privateRedis: redis.isPrivate,
      config,
      store,
      queues,
      log,
      kind: args.workers === false ? 'waiter' : 'backfill',
      onDraining: () => ops.draining(),
      task: async (signal, parts) => {
        const run = await waitForBackfill({
          queues,
          store,
          sourceSpec,
          minutes,
          hourly: args.hourly,
          artefacts,
          onProgress: progress.update,
          signal,
          log,
          pause: parts.pause,
          redisWaitMs: config.worker.redisWaitMs,
          present,
          // with no workers of its own, a run nobody works for would otherwise wait without a word
          idleWarnMs: args.workers === false ? config.worker.idleWarnMs : undefined,
        });
        // downloads run apart from indexing; the command ends once they are over too
        if (artefacts) run.summary.artefacts = await parts.artefacts().settle(artefacts.run, signal);
        return run;
      },
    });
    progress.done();
    // refused GTI credentials end the command with their one message; a store fault with a summary
    if (out.fatal && (!out.result || !isStoreFault(out.fatal))) throw out.fatal;
    const run = out.result as BackfillOutcome;
    // a stop signal ended the wait before the active minutes were finished: the drain finished them
    const summary = out.signalled && !out.forced ? await afterDrain(run, log) : run.summary;
    // refused credentials stopped the stages: what is unfinished failed for that cause, not a signal
    if (out.fatal) {
      failUnfinished(summary, `${errorCode(out.fatal) ?? 'ERROR'}: ${messageOf(out.fatal)}`);
      await recordFailures(store, sourceSpec, summary, log);
    }
    return { minutes, summary, sink: store.spec, signalled: out.signalled };
  } finally {
    await closeOps?.().catch(() => undefined);
    await closeQueues(queues, log);
    await store.close();
    await redis.stop();
  }
}

/** How long the summary after a drain may take to read (Redis gone: the summary at the signal stands). */
const AFTER_DRAIN_MS = 10_000;

/** The summary once the drained workers are done, or the one taken at the signal when it cannot be read. */
async function afterDrain(run: BackfillOutcome, log: Logger): Promise<BackfillSummary> {
  const timer = new AbortController();
  try {
    const again = await Promise.race([run.afterDrain(), sleep(AFTER_DRAIN_MS, undefined, { signal: timer.signal })]);
    if (again) {
      again.artefacts = run.summary.artefacts;
      return again;
    }
    log.warn({ timeoutMs: AFTER_DRAIN_MS }, 'the outcome after the drain could not be read in time: the summary is the one at the signal');
  } catch (err) {
    log.warn({ err: messageOf(err) }, 'the outcome after the drain could not be read: the summary is the one at the signal');
  } finally {
    timer.abort();
  }
  return run.summary;
}

/** Turns the minutes a stop left unfinished into failures with the cause that stopped the run. */
function failUnfinished(summary: BackfillSummary, reason: string): void {
  for (const f of summary.failures) {
    if (f.status !== 'pending') continue;
    f.status = 'failed';
    f.reason = reason;
  }
  summary.batches.failed += summary.batches.pending;
  summary.batches.pending = 0;
  summary.interrupted = false;
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
    `  records: ${r.indexed} indexed, ${r.rejected} rejected${r.rejected ? ` (see: ${dlqListCommand(run.sink)})` : ''}`,
    `  API units spent: ${run.summary.api_units}`,
  ];
  const a = run.summary.artefacts;
  if (a) lines.push(`  artefacts: ${a.completed} downloaded, ${a.failed} failed${a.open ? `, ${a.open} still queued` : ''} (this run)`);
  if (run.summary.requeued) lines.push(`  queue state lost and rebuilt: ${run.summary.requeued} feed job(s) enqueued again`);
  for (const f of failures.slice(0, SHOWN_FAILURES)) lines.push(`  ${f.status} ${f.batch}: ${f.reason}`);
  if (failures.length > SHOWN_FAILURES) lines.push(`  ... and ${failures.length - SHOWN_FAILURES} more (--json lists all)`);
  return lines.join('\n');
}
