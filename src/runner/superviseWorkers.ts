import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config/index.js';
import { messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { ChunkTransport, Queues, StageWorkerOptions, Scheduler, StageWorker } from '../queue/index.js';
import { FeedWorker } from '../feed/index.js';
import { IndexThread, IndexWorker } from '../indexing/index.js';
import { createWatchHook } from '../watch/index.js';

export type StageKind = 'feed' | 'index';

export type { StageWorker } from '../queue/index.js';

export interface SuperviseOptions<T> {
  redisUrl: string;
  config: Config;
  store: Store;
  queues: Queues;
  log: Logger;
  /** Stage workers to run in this process (none: e.g. a scheduler alone). */
  stages: readonly StageKind[];
  /**
   * Further workers that produce index chunks (lookups, artefact downloads): run and stopped with
   * the feed workers, before the index stage, which must keep taking chunks while they drain.
   * `transport` is how they hand chunks to the index stage when it runs in this process.
   */
  producers?: (onFatal: (err: Error) => void, transport?: ChunkTransport) => readonly StageWorker[];
  /** Told once when the process starts draining (the first stop signal, or refused credentials). */
  onDraining?: () => void;
  /** The feed workers' per-document hook (see StageWorkerOptions.onFeedDoc). */
  onFeedDoc?: StageWorkerOptions['onFeedDoc'];
  /** Started after the workers, stopped before them. */
  scheduler?: Scheduler;
  /**
   * The work the process exists for (a backfill's wait); when it settles, the workers drain and
   * stop. Without it they run until a signal. The signal aborts when the operator asks to stop.
   */
  task?: (signal: AbortSignal) => Promise<T>;
  /** How long a forced stop may take before it is given up (Redis gone, a hung close). */
  forceTimeoutMs?: number;
  /**
   * Run the index stage in a worker thread (its own store and Redis connections), so a process
   * running both stages (`backfill`, `run`) uses two cores instead of one JavaScript thread. The
   * producers of the process then hand it their chunks in memory (MemoryChunkTransport); it still
   * takes index jobs queued through Redis.
   */
  indexInThread?: boolean;
  /** The clock the index stage judges retention by (StageWorkerOptions.now); not for a thread, which opens its own store. */
  now?: () => number;
}

export interface SuperviseOutcome<T> {
  result?: T;
  /** What stopped the stages for good: refused credentials. */
  fatal?: Error;
  /** A stop signal arrived. */
  signalled: boolean;
  /** The stop was forced (second signal, drain timeout, a fatal error or Redis unreachable). */
  forced: boolean;
}

const FORCE_TIMEOUT_MS = 5000;

/**
 * Runs stage workers (and a scheduler) with the lifecycle every long-running command shares:
 * the first SIGTERM/SIGINT drains (no new jobs, active ones finish, bounded by
 * worker.drainTimeoutMs), the second forces (active jobs are abandoned; their locks expire and
 * another worker takes them). Refused credentials stop everything with one message. While Redis
 * is unreachable nothing can be acknowledged, so a stop goes straight to forcing, and every
 * close is bounded: signals always end the process.
 */
export async function superviseWorkers<T>(o: SuperviseOptions<T>): Promise<SuperviseOutcome<T>> {
  const { log, config } = o;
  const abort = new AbortController();
  const outcome: SuperviseOutcome<T> = { signalled: false, forced: false };
  let wake: () => void = () => undefined;
  const stopRequested = new Promise<void>((resolve) => (wake = resolve));
  let drainingTold = false;
  const requestStop = (force: boolean): void => {
    if (!drainingTold) o.onDraining?.();
    drainingTold = true;
    if (force) outcome.forced = true;
    abort.abort();
    wake();
  };
  const onFatal = (err: Error): void => {
    outcome.fatal ??= err;
    requestStop(true);
  };
  const workerOpts = { redisUrl: o.redisUrl, config, store: o.store, queues: o.queues, log, onFatal, onFeedDoc: o.onFeedDoc, now: o.now };
  const thread = o.indexInThread && o.stages.includes('index') ? new IndexThread(workerOpts) : undefined;
  const transport = thread?.transport;
  const stageWorkers: StageWorker[] = o.stages.map((s) =>
    s === 'feed'
      ? new FeedWorker({ ...workerOpts, transport })
      : (thread ?? new IndexWorker({ ...workerOpts, onStored: createWatchHook(o.store, log) })),
  );
  // built here so refused credentials in any of them stop the whole process too
  const extra = o.producers?.(onFatal, transport) ?? [];
  const producers = new Set<StageWorker>([...stageWorkers.filter((w) => w instanceof FeedWorker), ...extra]);
  const workers = [...stageWorkers, ...extra];

  let forceNow: () => void = () => undefined;
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals += 1;
    outcome.signalled = true;
    if (signals === 1) {
      log.warn({ signal: sig }, 'stopping: finishing active jobs (send the signal again to force)');
      requestStop(false);
    } else if (signals === 2) {
      log.warn({ signal: sig }, 'forced stop: active jobs will be taken again by another worker once their lock expires');
      requestStop(true);
      forceNow();
    } else {
      log.warn({ signal: sig }, 'third signal: exiting at once');
      process.exit(130);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  try {
    workers.forEach((w) => w.start());
    await o.scheduler?.start();
    // a task watches the signal itself and returns early when asked to stop
    if (o.task) outcome.result = await o.task(abort.signal);
    else await stopRequested;
  } finally {
    // nothing can be acknowledged without Redis: do not wait for a drain that cannot happen
    if (!outcome.forced && o.queues.connection.status !== 'ready') {
      log.warn('Redis is unreachable: stopping without draining');
      outcome.forced = true;
    }
    const forced = new Promise<void>((resolve) => (forceNow = resolve));
    const stopAll = async (force: boolean): Promise<void> => {
      await o.scheduler?.stop();
      if (force) {
        await Promise.all(workers.map((w) => w.stop(true)));
        return;
      }
      // producers first: a feed job waiting for room in the index queue finishes only while the
      // index workers still take chunks
      await Promise.all(workers.filter((w) => producers.has(w)).map((w) => w.stop(false)));
      await Promise.all(workers.filter((w) => !producers.has(w)).map((w) => w.stop(false)));
    };
    const drained = outcome.forced ? Promise.reject(new Error('forced')) : stopAll(false);
    const timer = new AbortController();
    const drainLimit = sleep(config.worker.drainTimeoutMs, undefined, { signal: timer.signal }).then(() => {
      throw new Error(`drain took longer than ${config.worker.drainTimeoutMs} ms`);
    });
    try {
      await Promise.race([drained, drainLimit, forced.then(() => Promise.reject(new Error('second signal')))]);
    } catch (err) {
      if (!outcome.forced) log.warn({ why: messageOf(err) }, 'forcing the stop');
      outcome.forced = true;
      drained.catch(() => undefined);
      await bounded(stopAll(true), o.forceTimeoutMs ?? FORCE_TIMEOUT_MS, log, 'forced stop of the workers');
    } finally {
      timer.abort();
      drainLimit.catch(() => undefined);
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  }
  return outcome;
}

/** How long closing the queues may take once the workers stopped (Redis gone: it never would). */
const CLOSE_TIMEOUT_MS = 5000;

/** Closes the queues' connection, waiting at most CLOSE_TIMEOUT_MS. */
export function closeQueues(queues: Queues, log: Logger): Promise<void> {
  return bounded(queues.close(), CLOSE_TIMEOUT_MS, log, 'closing the queues');
}

/** Waits for `p` at most `ms`; a close that hangs (Redis gone) must not keep the process alive. */
export async function bounded(p: Promise<unknown>, ms: number, log: Logger, what: string): Promise<void> {
  const timer = new AbortController();
  const timedOut = await Promise.race([
    p.then(
      () => false,
      (err: unknown) => (log.warn({ err: messageOf(err) }, `${what} failed`), false),
    ),
    sleep(ms, true, { signal: timer.signal }).catch(() => false),
  ]);
  timer.abort();
  if (timedOut) log.warn({ timeoutMs: ms }, `${what} did not finish in time: going on`);
}
