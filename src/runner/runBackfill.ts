import { setTimeout as sleep } from 'node:timers/promises';
import { messageOf, storeFaultOfReason } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { failedEntry, type Store } from '../store/index.js';
import {
  type Queues,
  feedJobId,
  hourJobId,
  indexJobId,
  type ArtefactChoice,
  type FeedJobData,
  type FeedJobResult,
} from '../queue/index.js';
import type { MinuteId } from '../minute/index.js';

export interface BackfillProgress {
  batchesTotal: number;
  batchesDone: number;
  chunksKnown: number;
  chunksDone: number;
  recordsAccepted: number;
  elapsedMs: number;
}

export interface BackfillSummary {
  /** `pending`: not finished when the run was interrupted; a finished run reports those as failed. */
  batches: { ok: number; empty: number; missing: number; failed: number; pending: number };
  records: { indexed: number; rejected: number };
  api_units: number;
  /** Every failed or unfinished minute with the reason (empty when all went well). */
  failures: { batch: MinuteId; status: 'failed' | 'pending'; reason: string }[];
  /** Feed jobs enqueued again because the queue lost them (Redis restarted empty, flushed). */
  requeued: number;
  interrupted: boolean;
  /** With --artefacts: the artefact queue once its downloads were over. */
  artefacts?: { completed: number; failed: number; open: number };
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
  signal?: AbortSignal;
  log?: Logger;
  /** How often one job lost by the queue is enqueued again before its minutes are reported failed. */
  maxRequeues?: number;
  /** Artefacts to download through the feed lines' links. */
  artefacts?: ArtefactChoice;
}

const STATE_BATCH = 250;
const RUNNING = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'paused', 'wait']);

/** Says how a lost queue is recovered, for the summary and the log. */
export const QUEUE_LOST_HINT =
  'its jobs vanished from Redis (restarted without persistence, flushed, or evicted: run Redis with appendonly yes and maxmemory-policy noeviction); run the same backfill again';

/**
 * Enqueues one feed job per minute and waits until every feed job and every index job it
 * spawned has finished. Jobs finished by an earlier run, or put aside until later, are replaced so
 * the range is really processed now (the effects are idempotent); jobs queued or running are left alone.
 * A job that vanishes from Redis before its work is in the store (Redis restarted empty, a
 * FLUSHALL) is never taken for finished: its feed job is enqueued again, and after
 * `maxRequeues` tries its minutes are reported failed with the cause.
 */
export async function runBackfill(o: BackfillOptions): Promise<BackfillSummary> {
  const started = Date.now();
  const jobs = planJobs(o.minutes, o.sourceSpec, o.hourly ?? false, o.artefacts);
  const byId = new Map(jobs.map((j) => [j.id, j]));
  await enqueue(o, jobs);
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

  const requeue = async (feedId: string, why: string): Promise<void> => {
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

  const pollFeed = async (): Promise<void> => {
    for (const id of take(pendingFeed)) {
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
      const perMinute = r.perMinute ?? { [(job?.data as FeedJobData).batch]: r.chunks };
      for (const [batch, chunks] of Object.entries(perMinute)) {
        for (let n = 0; n < chunks; n++) pendingIndex.set(indexJobId(batch, n), [batch, n, id]);
      }
    }
  };

  const pollIndex = async (): Promise<void> => {
    const gone = new Map<MinuteId, { feedId: string; ids: [string, number][] }>();
    for (const [id, [batch, n, feedId]] of take(pendingIndex)) {
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
  while ((pendingFeed.size > 0 || pendingIndex.size > 0) && !storeFault) {
    if (o.signal?.aborted) break;
    try {
      const poll = (async () => {
        await pollFeed();
        await pollIndex();
      })();
      poll.catch(() => undefined);
      await Promise.race([poll, stopRequested]);
      if (o.signal?.aborted) break;
      if (redisDown) o.log?.info('Redis answers again');
      redisDown = false;
    } catch (err) {
      // Redis down or restarting: keep waiting, the workers wait too; a lost queue shows once it is back
      if (!redisDown) o.log?.warn({ err: (err as Error).message }, 'cannot read job states; waiting for Redis');
      redisDown = true;
    }
    report();
    if ((pendingFeed.size > 0 || pendingIndex.size > 0) && !storeFault) await sleep(o.pollMs ?? 250);
  }
  report();
  const lost = new Set([...gaveUp].flatMap((id) => byId.get(id)?.minuteIds ?? []));
  const interrupted = o.signal?.aborted === true && !storeFault;
  // minutes whose work this run did not see through: a row an earlier run left says nothing of them
  const unfinished = new Set<MinuteId>([
    ...[...pendingFeed].flatMap((id) => byId.get(id)?.minuteIds ?? []),
    ...[...pendingIndex.values()].map(([batch]) => batch),
  ]);
  const summary = await summarize(o.store, o.minutes, { interrupted, lost, requeued, jobFailures, storeFault, unfinished });
  // every minute the run touched gets a row with its true status (best effort: the store may be the fault)
  if (!interrupted) await recordFailures(o.store, o.sourceSpec, summary, o.log);
  return summary;
}

/**
 * Writes the failures the run knows of into the batch log: a minute with no row gets a failed
 * row, a minute whose chunks were not all stored gets its missing chunks marked failed. A store
 * that refuses these writes (it is the fault) leaves the summary as the only record.
 */
export async function recordFailures(store: Store, sourceSpec: string, summary: BackfillSummary, log: Logger | undefined): Promise<void> {
  if (summary.failures.length === 0) return;
  try {
    const entries = new Map((await store.batches.get(summary.failures.map((f) => f.batch))).map((e) => [e.batch, e]));
    const now = Date.now();
    for (const f of summary.failures) {
      const e = entries.get(f.batch);
      if (!e) {
        await store.batches.record(failedEntry(f.batch, sourceSpec, f.reason, now, now));
      } else if (e.status !== 'pending' && e.status !== 'failed') {
        // a row an earlier run left: this run failed it
        await store.batches.record({ ...e, status: 'failed', error: f.reason, finishedAt: now });
      } else if (e.status === 'pending') {
        const stored = new Set(await store.batches.storedChunks(f.batch, e.chunks));
        for (let n = 0; n < e.chunks; n++) if (!stored.has(n)) await store.batches.chunkFailed(f.batch, n, f.reason);
      }
    }
  } catch (err) {
    log?.warn({ err: messageOf(err) }, 'the batch log could not record the failed minutes: the summary lists them');
  }
}

interface PlannedJob {
  id: string;
  data: FeedJobData;
  minutes: number;
  minuteIds: MinuteId[];
}

/** One job per minute, or per whole hour when hourly packages are asked for. */
export function planJobs(minutes: readonly MinuteId[], source: string, hourly: boolean, artefacts?: ArtefactChoice): PlannedJob[] {
  const extra = artefacts?.kinds.length ? { artefacts } : {};
  const byHour = new Map<string, MinuteId[]>();
  if (hourly) for (const m of minutes) byHour.set(m.slice(0, 10), [...(byHour.get(m.slice(0, 10)) ?? []), m]);
  const out: PlannedJob[] = [];
  const done = new Set<string>();
  for (const m of minutes) {
    const hour = m.slice(0, 10);
    const ofHour = byHour.get(hour);
    if (hourly && ofHour?.length === 60) {
      if (!done.has(hour))
        out.push({ id: hourJobId(hour), data: { batch: `${hour}00`, hour, source, ...extra }, minutes: 60, minuteIds: ofHour });
      done.add(hour);
    } else {
      out.push({ id: feedJobId(m), data: { batch: m, source, ...extra }, minutes: 1, minuteIds: [m] });
    }
  }
  return out;
}

/** The first STATE_BATCH items, so one poll stays bounded however large the range. */
function take<T>(items: Iterable<T>): T[] {
  const out: T[] = [];
  for (const item of items) {
    out.push(item);
    if (out.length >= STATE_BATCH) break;
  }
  return out;
}

async function enqueue(o: BackfillOptions, jobs: readonly PlannedJob[]): Promise<void> {
  for (let i = 0; i < jobs.length; i += STATE_BATCH) {
    const slice = jobs.slice(i, i + STATE_BATCH);
    await Promise.all(
      slice.map(async ({ id }) => {
        const state = await o.queues.feed.getJobState(id);
        // a job put aside (refused credentials, a damaged store) or waiting out a backoff would
        // hold this run back until its delay ends: it is replaced as a finished one is
        if (state === 'completed' || state === 'failed' || state === 'delayed') await (await o.queues.feed.getJob(id))?.remove();
      }),
    );
    await o.queues.feed.addBulk(slice.map((j) => ({ name: 'batch', data: j.data, opts: { jobId: j.id } })));
  }
}

/** The run's outcome, read back from the durable batch log and dead-letter store. */
export async function summarize(
  store: Store,
  minutes: readonly MinuteId[],
  run: {
    interrupted?: boolean;
    lost?: ReadonlySet<MinuteId>;
    requeued?: number;
    /** Why a minute's jobs failed, as the queue kept it. */
    jobFailures?: ReadonlyMap<MinuteId, string>;
    /** The store fault that stopped the run early. */
    storeFault?: string;
    /** Minutes whose jobs had not finished when the run stopped waiting. */
    unfinished?: ReadonlySet<MinuteId>;
  } = {},
): Promise<BackfillSummary> {
  const entries = new Map((await store.batches.get(minutes)).map((e) => [e.batch, e]));
  const batches = { ok: 0, empty: 0, missing: 0, failed: 0, pending: 0 };
  const failures: BackfillSummary['failures'] = [];
  const okMinutes: MinuteId[] = [];
  let indexed = 0;
  let rejected = 0;
  for (const m of minutes) {
    const e = entries.get(m);
    const known = run.jobFailures?.get(m);
    if (known && e?.status !== 'failed') {
      // a job of this run failed for good: a row left by an earlier run (or none) does not say otherwise
      batches.failed += 1;
      failures.push({ batch: m, status: 'failed', reason: known });
    } else if (e && e.status !== 'pending' && !run.unfinished?.has(m)) {
      batches[e.status] += 1;
      if (e.status === 'failed') failures.push({ batch: m, status: 'failed', reason: e.error ?? known ?? 'failed' });
    } else {
      // no outcome, or chunks not all stored: never ok. Interrupted runs leave them pending.
      const reason = run.lost?.has(m)
        ? `QUEUE_STATE_LOST: ${QUEUE_LOST_HINT}`
        : (known ??
          (run.storeFault
            ? `not finished: the run stopped on a store fault (${run.storeFault})`
            : run.unfinished?.has(m)
              ? 'not finished when the run stopped'
              : !e
                ? 'no outcome recorded (the feed job did not finish)'
                : `${e.chunks} chunk(s) queued, not all stored (an index job failed or vanished)`));
      const status = run.interrupted ? 'pending' : 'failed';
      batches[status] += 1;
      failures.push({ batch: m, status, reason });
    }
    if (!e) continue;
    rejected += e.rejected;
    if (known && e.status === 'ok') {
      // the row says ok from an earlier run: what this run stored of it is not known, so not counted
      continue;
    }
    // only what is in the store counts: a whole minute once every chunk is, else its stored chunks
    if (e.status === 'ok' && !run.unfinished?.has(m)) {
      indexed += e.accepted;
      okMinutes.push(m);
    } else if (e.chunks > 0) indexed += await store.batches.storedRecords(m, e.chunks);
  }
  const indexRejected = await store.dlq.count({ stage: 'index', batches: minutes });
  const okRejected = okMinutes.length === minutes.length ? indexRejected : await store.dlq.count({ stage: 'index', batches: okMinutes });
  return {
    batches,
    records: { indexed: indexed - okRejected, rejected: rejected + indexRejected },
    // directory sources never call the API; API sources report through the quota ledger
    api_units: 0,
    failures,
    requeued: run.requeued ?? 0,
    interrupted: run.interrupted === true,
  };
}
