import { setTimeout as sleep } from 'node:timers/promises';
import { recordFailures, summarize, unreadSummary, type BackfillSummary } from './backfillSummary.js';
import { idleWatch } from './idleWatch.js';
import { errorCode, messageOf, storeFaultOfReason } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { storeIdentity, type Store } from '../store/index.js';
import { diagnoseConnection, type Queues, indexJobId, type ArtefactChoice, type FeedJobData, type FeedJobResult } from '../queue/index.js';
import type { MinuteId } from '../minute/index.js';
import { enqueue, planJobs, STATE_BATCH, take, type PlannedJob } from './backfillJobs.js';

export interface BackfillProgress {
  batchesTotal: number;
  batchesDone: number;
  chunksKnown: number;
  chunksDone: number;
  recordsAccepted: number;
  elapsedMs: number;
}

export interface BackfillOptions {
  queues: Queues;
  store: Store;
  sourceSpec: string;
  minutes: readonly MinuteId[];
  onProgress?: (p: BackfillProgress) => void;
  /** Read whole hours of the range from hourly packages (one job per hour) instead of 60 minute jobs. */
  hourly?: boolean;
  pollMs?: number;
  /** The pause between two polls (default: pollMs); a process's own workers end it early (ProcessParts.pause). */
  pause?: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  log?: Logger;
  /** How often one job lost by the queue is enqueued again before its minutes are reported failed. */
  maxRequeues?: number;
  /** Artefacts to download through the feed lines' links. */
  artefacts?: ArtefactChoice;
  /** How long the run waits for a Redis that stopped answering before it ends, its unfinished minutes failed (default: as long as it takes). */
  redisWaitMs?: number;
  /** Minutes whose batch file the run found in the feed directory: a worker reporting one missing reads another directory. */
  present?: ReadonlySet<MinuteId>;
  /** Says so in the log, this often, while no job finishes (a run whose work is left to fleet workers). */
  idleWarnMs?: number;
}

/** A poll unanswered this long counts as Redis gone (its commands wait in the client's queue meanwhile). */
const POLL_STALL_MS = 10_000;
const RUNNING = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'paused', 'wait']);

/**
 * Enqueues one feed job per minute and waits until every feed job and every index job it
 * spawned has finished. Jobs finished by an earlier run, or put aside until later, are replaced so
 * the range is really processed now (the effects are idempotent); jobs queued or running are left alone.
 * A job that vanishes from Redis before its work is in the store (Redis restarted empty, a
 * FLUSHALL) is never taken for finished: its feed job is enqueued again, and after
 * `maxRequeues` tries its minutes are reported failed with the cause.
 */
export async function runBackfill(o: BackfillOptions): Promise<BackfillSummary> {
  return (await waitForBackfill(o)).summary;
}

/** A backfill's outcome when its wait ended, and how to read it again once its workers have stopped. */
export interface BackfillOutcome {
  summary: BackfillSummary;
  /**
   * The outcome once the process's workers have drained: a stop signal ends the wait while jobs
   * are still being finished, and the minutes they finish meanwhile are stored, not pending. The
   * same summary when the run was not interrupted. Enqueues nothing.
   */
  afterDrain(): Promise<BackfillSummary>;
}

/** runBackfill, with the outcome read again after a drain (the backfill command's summary). */
export async function waitForBackfill(o: BackfillOptions): Promise<BackfillOutcome> {
  const started = Date.now();
  // the store this run reads back: a fleet worker writing another refuses its jobs, saying so
  const jobs = planJobs(o.minutes, o.sourceSpec, o.hourly ?? false, o.artefacts, storeIdentity(o.store));
  const byId = new Map(jobs.map((j) => [j.id, j]));
  await enqueue(o.queues, jobs);
  const pendingFeed = new Set(byId.keys());
  /** index job id → [batch, n, feed job id] */
  const pendingIndex = new Map<string, [MinuteId, number, string]>();
  const requeues = new Map<string, number>();
  const gaveUp = new Set<string>();
  const maxRequeues = o.maxRequeues ?? 3;
  let batchesDone = 0;
  let chunksKnown = 0;
  let chunksDone = 0;
  let accepted = 0;
  let requeued = 0;
  let redisDown = false;
  /** Why index or feed jobs of a minute failed, as BullMQ kept it (the batch log may not have been writable). */
  const jobFailures = new Map<MinuteId, string>();
  /** The first store fault met: the run stops waiting, since every further write would meet it too. */
  let storeFault: string | undefined;
  const noteFailure = async (queue: Queues['feed'] | Queues['index'], id: string, minutes: readonly MinuteId[]): Promise<void> => {
    const reason = (await queue.getJob(id))?.failedReason;
    if (!reason) return;
    for (const m of minutes) if (!jobFailures.has(m)) jobFailures.set(m, reason);
    if (!storeFault && storeFaultOfReason(reason)) {
      storeFault = reason;
      o.log?.error({ job: id }, `store fault: ${reason}; stopping the run`);
    }
  };
  const report = (): void =>
    o.onProgress?.({
      batchesTotal: o.minutes.length,
      batchesDone,
      chunksKnown,
      chunksDone,
      recordsAccepted: accepted,
      elapsedMs: Date.now() - started,
    });

  /** Set once the workers have stopped: a job lost since is left unfinished, not enqueued again. */
  let stopped = false;
  const requeue = async (feedId: string, why: string): Promise<void> => {
    if (stopped) {
      pendingFeed.add(feedId);
      return;
    }
    const job = byId.get(feedId) as PlannedJob;
    for (const [id, [, , owner]] of pendingIndex) if (owner === feedId) pendingIndex.delete(id);
    const n = (requeues.get(feedId) ?? 0) + 1;
    requeues.set(feedId, n);
    if (n > maxRequeues) {
      gaveUp.add(feedId);
      o.log?.error({ job: feedId }, `queue state lost ${maxRequeues} times for ${feedId}: reported failed`);
      return;
    }
    o.log?.warn({ job: feedId, why }, `queue state lost for ${feedId} (${why}): enqueued again`);
    await (await o.queues.feed.getJob(feedId))?.remove();
    await o.queues.feed.add('batch', job.data, { jobId: feedId });
    pendingFeed.add(feedId);
    batchesDone -= job.minutes;
    requeued += 1;
  };

  const pollFeed = async (ids = take(pendingFeed)): Promise<void> => {
    for (const id of ids) {
      const state = await o.queues.feed.getJobState(id);
      if (RUNNING.has(state)) continue;
      pendingFeed.delete(id);
      batchesDone += byId.get(id)?.minutes ?? 1;
      if (state === 'failed') {
        await noteFailure(o.queues.feed, id, byId.get(id)?.minuteIds ?? []);
        continue;
      }
      const job = state === 'completed' ? await o.queues.feed.getJob(id) : undefined;
      const r = job?.returnvalue as FeedJobResult | undefined;
      if (!r) {
        // 'unknown', or completed without a result: the job is gone before saying what it queued
        await requeue(id, `feed job ${state === 'unknown' ? 'missing' : 'without result'}`);
        continue;
      }
      accepted += r.accepted;
      chunksKnown += r.chunks;
      // handed over in memory: the job completed only once its chunks were stored
      if (r.stored) {
        chunksDone += r.chunks;
        continue;
      }
      const perMinute = r.perMinute ?? { [(job?.data as FeedJobData).batch]: r.chunks };
      for (const [batch, chunks] of Object.entries(perMinute)) {
        for (let n = 0; n < chunks; n++) pendingIndex.set(indexJobId(batch, n), [batch, n, id]);
      }
    }
  };

  const pollIndex = async (entries = take(pendingIndex)): Promise<void> => {
    const gone = new Map<MinuteId, { feedId: string; ids: [string, number][] }>();
    for (const [id, [batch, n, feedId]] of entries) {
      const state = await o.queues.index.getJobState(id);
      if (RUNNING.has(state)) continue;
      if (state === 'failed') {
        pendingIndex.delete(id);
        chunksDone += 1;
        await noteFailure(o.queues.index, id, [batch]);
        continue;
      }
      // completed jobs are removed at once, so 'unknown' is normal: the batch log's mark decides
      const g = gone.get(batch) ?? { feedId, ids: [] };
      g.ids.push([id, n]);
      gone.set(batch, g);
    }
    // marks are read after the states: a job removed before its state was read wrote its mark earlier
    for (const [batch, g] of gone) {
      const stored = new Set(await o.store.batches.storedChunks(batch, Math.max(...g.ids.map(([, n]) => n)) + 1));
      const lost = g.ids.filter(([, n]) => !stored.has(n));
      for (const [id, n] of g.ids) {
        if (stored.has(n)) {
          pendingIndex.delete(id);
          chunksDone += 1;
        }
      }
      if (lost.length > 0 && pendingIndex.has((lost[0] as [string, number])[0])) {
        await requeue(g.feedId, `${lost.length} index job(s) of ${batch} missing`);
      }
    }
  };

  // a poll to a Redis that is gone waits for it: a stop request must not wait with it
  const stopRequested = new Promise<void>((resolve) => {
    if (o.signal?.aborted) resolve();
    o.signal?.addEventListener('abort', () => resolve(), { once: true });
  });
  // one poll at a time: a poll to a Redis that is gone waits for it (its commands queue until it is
  // back), and is waited for again rather than joined by more
  let inflight: Promise<{ error?: unknown }> | undefined;
  /** When the poll in flight was sent: Redis has not answered since then. */
  let inflightSince = Date.now();
  let downSince: number | undefined;
  /** Why the run gave up waiting for Redis (redisWaitMs passed without an answer). */
  let redisLost: string | undefined;
  const redisWaitMs = o.redisWaitMs ?? Number.POSITIVE_INFINITY;
  const lostRedis = (why: string): void => {
    // Redis down or restarting: keep waiting, the workers wait too; a lost queue shows once it is back
    if (!redisDown) o.log?.warn({ err: why, waitMs: o.redisWaitMs }, 'cannot read job states; waiting for Redis');
    redisDown = true;
    // counted from the unanswered poll, not from when its wait ran out: redisWaitMs is the whole wait
    downSince ??= inflightSince;
  };
  const idle = idleWatch(o.idleWarnMs, (idleS, done) =>
    o.log?.warn(
      { idleS, batchesDone: done, batchesTotal: o.minutes.length },
      `no job finished for ${idleS} s: the jobs wait for fleet workers (worker feed, worker index) on this Redis and queue prefix; is one running?`,
    ),
  );
  while ((pendingFeed.size > 0 || pendingIndex.size > 0) && !storeFault) {
    if (o.signal?.aborted) break;
    if (!inflight) inflightSince = Date.now();
    inflight ??= (async () => {
      await pollFeed();
      await pollIndex();
    })().then(
      () => ({}),
      (error: unknown) => ({ error }),
    );
    const timer = new AbortController();
    // no longer than what is left of redisWaitMs once Redis stopped answering
    const left = downSince === undefined ? redisWaitMs : Math.max(1, redisWaitMs - (Date.now() - downSince));
    const stallMs = Math.min(POLL_STALL_MS, left);
    const answer = await Promise.race([
      inflight,
      stopRequested.then(() => undefined),
      sleep(stallMs, undefined, { signal: timer.signal }).catch(() => undefined),
    ]);
    timer.abort();
    if (o.signal?.aborted) break;
    if (answer) inflight = undefined;
    if (answer && !answer.error) {
      if (redisDown) o.log?.info('Redis answers again');
      redisDown = false;
      downSince = undefined;
    } else lostRedis(answer ? messageOf(answer.error) : `no answer in ${stallMs} ms`);
    if (downSince !== undefined && Date.now() - downSince >= redisWaitMs) {
      // a cluster that answers but has lost the queues' slot says which, and why
      const why = await diagnoseConnection(o.queues.connection, o.queues.feed.opts.prefix ?? '');
      redisLost = `Redis did not answer for ${Math.round((Date.now() - downSince) / 1000)} s (worker.redisWaitMs)${why ? ` (${why})` : ''}: the run stopped waiting for it`;
      o.log?.error({ waitMs: redisWaitMs }, redisLost);
      break;
    }
    report();
    idle.check(`${batchesDone}:${chunksDone}`, batchesDone);
    if ((pendingFeed.size > 0 || pendingIndex.size > 0) && !storeFault) await (o.pause ?? sleep)(o.pollMs ?? 250);
  }
  report();
  const interrupted = o.signal?.aborted === true && !storeFault && !redisLost;
  const outcome = (): Promise<BackfillSummary> => {
    const lost = new Set([...gaveUp].flatMap((id) => byId.get(id)?.minuteIds ?? []));
    // minutes whose work this run did not see through: a row an earlier run left says nothing of them
    const unfinished = new Set<MinuteId>([
      ...[...pendingFeed].flatMap((id) => byId.get(id)?.minuteIds ?? []),
      ...[...pendingIndex.values()].map(([batch]) => batch),
    ]);
    const run = { interrupted, lost, requeued, jobFailures, storeFault, redisLost, unfinished, present: o.present, startedAt: started };
    return summarize(o.store, o.minutes, run).catch((err: unknown) => {
      // refused credentials end the command with their one error, as everywhere
      if (errorCode(err) === 'SINK_AUTH') throw err;
      o.log?.error({ err: messageOf(err) }, 'the store could not be read back: every minute is reported unfinished');
      return unreadSummary(o.minutes, interrupted, err);
    });
  };
  const summary = await outcome();
  // every minute the run touched gets a row with its true status (best effort: the store may be the fault)
  if (!interrupted) await recordFailures(o.store, o.sourceSpec, summary, o.log);
  return {
    summary,
    afterDrain: async () => {
      if (!interrupted) return summary;
      stopped = true;
      // a poll still under way at the signal ends first: two polls must not count the same job twice
      await inflight;
      // every pending job's state once, STATE_BATCH at a time (the index jobs after the feed jobs that queue them)
      const feed = [...pendingFeed];
      for (let i = 0; i < feed.length; i += STATE_BATCH) await pollFeed(feed.slice(i, i + STATE_BATCH));
      const index = [...pendingIndex];
      for (let i = 0; i < index.length; i += STATE_BATCH) await pollIndex(index.slice(i, i + STATE_BATCH));
      return outcome();
    },
  };
}
