import { messageOf } from '../errors/index.js';
import type { MinuteId } from '../minute/index.js';
import { feedJobId, hourJobId, type ArtefactChoice, type FeedJobData, type Queues } from '../queue/index.js';

/* The jobs of a backfill: planned per minute or hour, enqueued in bounded slices. */

/** Job states read (or jobs added) in one go, so one poll stays bounded however large the range. */
export const STATE_BATCH = 250;

/** One feed job of a backfill: a minute, or a whole hour read from its hourly package. */
export interface PlannedJob {
  id: string;
  data: FeedJobData;
  minutes: number;
  minuteIds: MinuteId[];
}

/** One job per minute, or per whole hour when hourly packages are asked for. */
export function planJobs(
  minutes: readonly MinuteId[],
  source: string,
  hourly: boolean,
  artefacts?: ArtefactChoice,
  store?: string,
): PlannedJob[] {
  const extra = { ...(artefacts?.kinds.length ? { artefacts } : {}), ...(store ? { store } : {}) };
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
export function take<T>(items: Iterable<T>): T[] {
  const out: T[] = [];
  for (const item of items) {
    out.push(item);
    if (out.length >= STATE_BATCH) break;
  }
  return out;
}

/**
 * Removes a finished or waiting job so the run can add it again, unless a worker took it since its
 * state was read (a delay ending): BullMQ then refuses the removal, and the run waits for that
 * worker's outcome instead, which is the same minute's work.
 */
async function removeUnlessTaken(job: Awaited<ReturnType<Queues['feed']['getJob']>>): Promise<void> {
  try {
    await job?.remove();
  } catch (err) {
    if (!/locked by another worker/.test(messageOf(err))) throw err;
  }
}

/** Enqueues the planned jobs, STATE_BATCH at a time, replacing those an earlier run finished or put aside. */
export async function enqueue(queues: Queues, jobs: readonly PlannedJob[]): Promise<void> {
  for (let i = 0; i < jobs.length; i += STATE_BATCH) {
    const slice = jobs.slice(i, i + STATE_BATCH);
    await Promise.all(
      slice.map(async ({ id }) => {
        const state = await queues.feed.getJobState(id);
        // a job put aside (refused credentials, a damaged store) or waiting out a backoff would
        // hold this run back until its delay ends: it is replaced as a finished one is
        if (state === 'completed' || state === 'failed' || state === 'delayed') await removeUnlessTaken(await queues.feed.getJob(id));
      }),
    );
    await queues.feed.addBulk(slice.map((j) => ({ name: 'batch', data: j.data, opts: { jobId: j.id } })));
  }
}
