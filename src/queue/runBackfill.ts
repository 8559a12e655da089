import { setTimeout as sleep } from 'node:timers/promises';
import type { MinuteId } from '../feed/index.js';
import type { Store } from '../store/index.js';
import type { Queues } from './createQueues.js';
import { feedJobId, hourJobId, indexJobId, type FeedJobData, type FeedJobResult } from './names.js';

export interface BackfillProgress {
  batchesTotal: number;
  batchesDone: number;
  chunksKnown: number;
  chunksDone: number;
  recordsAccepted: number;
  elapsedMs: number;
}

export interface BackfillSummary {
  batches: { ok: number; empty: number; missing: number; failed: number };
  records: { indexed: number; rejected: number };
  api_units: number;
}

export interface BackfillOptions {
  queues: Queues;
  store: Store;
  sourceSpec: string;
  minutes: readonly MinuteId[];
  onProgress?: (p: BackfillProgress) => void;
  /** Read whole hours as hourly packages (one job per hour) instead of 60 minute jobs. */
  hourly?: boolean;
  pollMs?: number;
  signal?: AbortSignal;
}

const STATE_BATCH = 250;
const FINISHED = new Set(['completed', 'failed', 'unknown']);

/**
 * Enqueues one feed job per minute and waits until every feed job and every index job it
 * spawned has finished. Jobs finished by an earlier run are replaced so the range is really
 * processed again (the effects are idempotent); jobs still queued or running are left alone.
 */
export async function runBackfill(o: BackfillOptions): Promise<BackfillSummary> {
  const started = Date.now();
  const jobs = planJobs(o.minutes, o.sourceSpec, o.hourly ?? false);
  await enqueue(o, jobs);
  const minutesOf = new Map(jobs.map((j) => [j.id, j.minutes]));
  const pendingFeed = new Set(minutesOf.keys());
  const pendingIndex = new Set<string>();
  let batchesDone = 0;
  let chunksKnown = 0;
  let accepted = 0;
  const report = (): void =>
    o.onProgress?.({
      batchesTotal: o.minutes.length,
      batchesDone,
      chunksKnown,
      chunksDone: chunksKnown - pendingIndex.size,
      recordsAccepted: accepted,
      elapsedMs: Date.now() - started,
    });
  while (pendingFeed.size > 0 || pendingIndex.size > 0) {
    if (o.signal?.aborted) break;
    for (const id of take(pendingFeed)) {
      const state = await o.queues.feed.getJobState(id);
      if (!FINISHED.has(state)) continue;
      pendingFeed.delete(id);
      batchesDone += minutesOf.get(id) ?? 1;
      if (state !== 'completed') continue;
      const job = await o.queues.feed.getJob(id);
      const r = job?.returnvalue as FeedJobResult | undefined;
      if (!r) continue;
      accepted += r.accepted;
      chunksKnown += r.chunks;
      const perMinute = r.perMinute ?? { [(job?.data as FeedJobData).batch]: r.chunks };
      for (const [batch, chunks] of Object.entries(perMinute)) {
        for (let n = 0; n < chunks; n++) pendingIndex.add(indexJobId(batch, n));
      }
    }
    for (const id of take(pendingIndex)) {
      // 'unknown' means completed and already removed: index jobs are dropped soon after success
      if (FINISHED.has(await o.queues.index.getJobState(id))) pendingIndex.delete(id);
    }
    report();
    if (pendingFeed.size > 0 || pendingIndex.size > 0) await sleep(o.pollMs ?? 250);
  }
  report();
  return summarize(o.store, o.minutes);
}

interface PlannedJob {
  id: string;
  data: FeedJobData;
  minutes: number;
}

/** One job per minute, or per whole hour when hourly packages are asked for. */
export function planJobs(minutes: readonly MinuteId[], source: string, hourly: boolean): PlannedJob[] {
  const byHour = new Map<string, MinuteId[]>();
  if (hourly) for (const m of minutes) byHour.set(m.slice(0, 10), [...(byHour.get(m.slice(0, 10)) ?? []), m]);
  const out: PlannedJob[] = [];
  const done = new Set<string>();
  for (const m of minutes) {
    const hour = m.slice(0, 10);
    if (hourly && byHour.get(hour)?.length === 60) {
      if (!done.has(hour)) out.push({ id: hourJobId(hour), data: { batch: `${hour}00`, hour, source }, minutes: 60 });
      done.add(hour);
    } else {
      out.push({ id: feedJobId(m), data: { batch: m, source }, minutes: 1 });
    }
  }
  return out;
}

function take(set: Set<string>): string[] {
  const out: string[] = [];
  for (const id of set) {
    out.push(id);
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
        if (state === 'completed' || state === 'failed') await (await o.queues.feed.getJob(id))?.remove();
      }),
    );
    await o.queues.feed.addBulk(slice.map((j) => ({ name: 'batch', data: j.data, opts: { jobId: j.id } })));
  }
}

/** The run's outcome, read back from the durable batch log and dead-letter store. */
export async function summarize(store: Store, minutes: readonly MinuteId[]): Promise<BackfillSummary> {
  const entries = await store.batches.get(minutes);
  const batches = { ok: 0, empty: 0, missing: 0, failed: 0 };
  let accepted = 0;
  let rejected = 0;
  for (const e of entries) {
    batches[e.status] += 1;
    accepted += e.accepted;
    rejected += e.rejected;
  }
  const indexRejected = await store.dlq.count({ stage: 'index', batches: minutes });
  return {
    batches,
    records: { indexed: accepted - indexRejected, rejected: rejected + indexRejected },
    // directory sources never call the API; API sources report through the quota ledger
    api_units: 0,
  };
}
