import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config/index.js';
import { messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { Queues, StageWorkerOptions, Scheduler, StageWorker } from '../queue/index.js';
import { artefactStage, type ArtefactStage } from '../artefacts/index.js';
import { FeedWorker } from '../feed/index.js';
import { IndexThread, IndexWorker } from '../indexing/index.js';
import { LookupWorker } from '../lookup/index.js';
import { createWatchHook } from '../watch/index.js';
import { abandonCalls, callsOpen, callsSettled } from '../quota/index.js';
import { JobSettles } from './JobSettles.js';
import { PROCESS_KINDS, type ProcessKind, type ProcessPlan } from './processKinds.js';

export type { StageWorker } from '../queue/index.js';

/** What a process's task may use of what it runs. */
export interface ProcessParts {
  /** The artefact capability on the process's connection (made on first use): a task waits for the downloads it asked for. */
  artefacts(): ArtefactStage;
  /**
   * The task's pause between two polls of the queue: `ms`, or until a job of this process's
   * workers ends (JobSettles).
   */
  pause(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface SuperviseOptions<T> {
  redisUrl: string;
  config: Config;
  store: Store;
  queues: Queues;
  log: Logger;
  /** Which kind of process this is: its row of PROCESS_KINDS says what runs in it. */
  kind: ProcessKind;
  /** Told once when the process starts draining (the first stop signal, or refused credentials). */
  onDraining?: () => void;
  /** Started after the workers, stopped before them. */
  scheduler?: Scheduler;
  /**
   * The work the process exists for (a backfill's wait); when it settles, the workers drain and
   * stop. Without it they run until a signal. The signal aborts when the operator asks to stop.
   */
  task?: (signal: AbortSignal, parts: ProcessParts) => Promise<T>;
  /** How long a forced stop may take before it is given up (Redis gone, a hung close). */
  forceTimeoutMs?: number;
  /** The clock the index stage judges retention by (StageWorkerOptions.now); not for a thread, which opens its own store. */
  now?: () => number;
  /**
   * The process's Redis is its own private redis-server: nothing else can queue index jobs in it,
   * so an index thread takes none (and loads no queue client for them).
   */
  privateRedis?: boolean;
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
  const settles = new JobSettles();
  const base = { redisUrl: o.redisUrl, config, store: o.store, queues: o.queues, log, now: o.now, onSettled: () => settles.notify() };
  let artefacts: ArtefactStage | undefined;
  const parts: ProcessParts = {
    artefacts: () => (artefacts ??= artefactStage(base)),
    pause: (ms, signal) => settles.pause(ms, signal),
  };
  // built here so refused credentials in any of them stop the whole process too
  const { stageWorkers, producers: extra } = assemble(PROCESS_KINDS[o.kind], { ...base, onFatal }, parts, o.privateRedis ?? false);
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
    if (o.task) outcome.result = await o.task(abort.signal, parts);
    else await stopRequested;
  } finally {
    // nothing can be acknowledged without Redis: do not wait for a drain that cannot happen (a
    // Redis that takes connections and answers nothing, a host frozen, looks connected)
    if (!outcome.forced && !(await answers(o.queues.connection, config.queuePrefix))) {
      log.warn('Redis is unreachable or does not answer: stopping without draining');
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
      exitOnLateSignals();
      if (artefacts) await bounded(artefacts.close(), CLOSE_TIMEOUT_MS, log, 'closing the artefact queue');
    }
  }
  return outcome;
}

/**
 * The workers of one kind of process, from its row of PROCESS_KINDS: its stages (the index stage
 * in a thread, or not), the transport their chunks take, its producers and its hooks.
 */
function assemble(
  plan: ProcessPlan,
  o: StageWorkerOptions,
  parts: ProcessParts,
  privateRedis: boolean,
): { stageWorkers: StageWorker[]; producers: StageWorker[] } {
  const hook = (h: 'artefacts' | 'watch'): boolean => (plan.hooks as readonly string[]).includes(h);
  const onFeedDoc: StageWorkerOptions['onFeedDoc'] = hook('artefacts') ? (doc, job) => parts.artefacts().onFeedDoc(doc, job) : undefined;
  const hasIndex = plan.stages.includes('index');
  const thread =
    hasIndex && plan.indexIn === 'thread' ? new IndexThread({ ...o, watch: hook('watch'), consumeQueue: !privateRedis }) : undefined;
  // producers of a process whose index stage is its thread hand their chunks over in memory
  const transport = thread?.transport;
  const stageWorkers = plan.stages.map((s): StageWorker => {
    if (s === 'feed') return new FeedWorker({ ...o, transport, onFeedDoc });
    return (
      thread ??
      new IndexWorker({
        ...o,
        onStored: hook('watch') ? createWatchHook(o.store, o.log, { webhook: { targets: o.config.webhooks } }) : undefined,
      })
    );
  });
  const producers = plan.producers.map((p): StageWorker => {
    if (p === 'artefacts') return parts.artefacts().worker(o.onFatal);
    return new LookupWorker({
      ...o,
      transport,
      onDoc: hook('artefacts') ? (doc, job) => parts.artefacts().onLookupDoc(doc, job) : undefined,
    });
  });
  return { stageWorkers, producers };
}

/** How long closing the queues may take once the workers stopped (Redis gone: it never would). */
const CLOSE_TIMEOUT_MS = 5000;
/** How long the calls given up at close get to write their unanswered entries. */
const ABANDON_TIMEOUT_MS = 1000;

/** How long a stop waits for Redis to answer for the queues' keys before it gives up the drain. */
const PING_TIMEOUT_MS = 2000;

/**
 * Whether Redis answers in time for the queues' keys (the connection may look ready while nothing
 * answers). A key of the queue prefix, not a PING: on a cluster a PING goes to any node, while the
 * queues' slot may have no master left.
 */
async function answers(connection: Queues['connection'], prefix: string): Promise<boolean> {
  if (connection.status !== 'ready') return false;
  const timer = new AbortController();
  try {
    return await Promise.race([
      connection.exists(`${prefix}:stop-check`).then(
        () => true,
        () => false,
      ),
      sleep(PING_TIMEOUT_MS, false, { signal: timer.signal }),
    ]);
  } finally {
    timer.abort();
  }
}

let lateSignalsExit = false;

/**
 * Once the workers are stopped, a further SIGTERM/SIGINT (sent while the process closes its
 * connections) exits at once with 130, as documented, instead of the signal's default death (143).
 */
function exitOnLateSignals(): void {
  if (lateSignalsExit) return;
  lateSignalsExit = true;
  const exit = (): never => process.exit(130);
  process.on('SIGTERM', exit);
  process.on('SIGINT', exit);
}

/** Closes the queues' connection, waiting at most CLOSE_TIMEOUT_MS. */
export async function closeQueues(queues: Queues, log: Logger): Promise<void> {
  // the API calls under way (a forced stop leaves them running) get their ledger entries first;
  // those still unanswered then are given up, and recorded so, before the connection goes
  await bounded(callsSettled(), CLOSE_TIMEOUT_MS, log, 'recording the API calls under way');
  if (callsOpen() > 0) {
    log.warn({ calls: callsOpen() }, 'API calls still unanswered: given up, recorded on the ledger as unanswered');
    abandonCalls();
    await bounded(callsSettled(), ABANDON_TIMEOUT_MS, log, 'recording the API calls given up');
  }
  await bounded(queues.close(), CLOSE_TIMEOUT_MS, log, 'closing the queues');
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
