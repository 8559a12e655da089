import { addMinutes, minuteRange, minuteToMs, type MinuteId } from '../minute/index.js';
import type { BatchLog, BatchLogEntry } from './BatchLog.js';

/** How far ingestion is, from the batch log: what `status` and the hunting page's landing view show. */
export interface IngestFreshness {
  /** The newest minute through which every minute has its outcome, or null without any. */
  doneThrough: MinuteId | null;
  /** Now minus the end of that minute (seconds); null without one. */
  lagSeconds: number | null;
  /** The newest minutes of the log (up to the day asked), newest first. */
  recent: BatchLogEntry[];
  /** Minutes among them that failed, and those missing from the feed, oldest first. */
  failed: MinuteId[];
  missing: MinuteId[];
}

/**
 * The newest minute of the batch log through which every minute has its outcome (anything but
 * `pending`), from the start of the run of consecutive minutes that ends at the newest one: what
 * the live cursor would be, for stores filled by backfills (they keep no cursor).
 */
export function doneThrough(entries: readonly Pick<BatchLogEntry, 'batch' | 'status'>[]): MinuteId | null {
  const byBatch = new Map(entries.map((e) => [e.batch, e.status]));
  const sorted = [...byBatch.keys()].sort();
  const newest = sorted[sorted.length - 1];
  if (!newest) return null;
  // the run of consecutive minutes that ends at the newest: older minutes a backfill ran again
  // (days before, apart from it) say nothing of how far ingestion is
  let start = newest;
  while (byBatch.has(addMinutes(start, -1))) start = addMinutes(start, -1);
  let done: MinuteId | null = null;
  for (const m of minuteRange(start, newest)) {
    const status = byBatch.get(m);
    if (status === undefined || status === 'pending') break;
    done = m;
  }
  return done;
}

/**
 * Ingestion freshness from the newest `minutes` feed minutes of the batch log (a day by default);
 * `cursor`, the live scheduler's when one is kept, stands for doneThrough.
 */
export async function ingestFreshness(
  batches: Pick<BatchLog, 'minutes'>,
  o: { minutes?: number; cursor?: MinuteId | null; now?: number } = {},
): Promise<IngestFreshness> {
  const recent = [...(await batches.minutes(o.minutes ?? 1440))].sort((a, b) => b.batch.localeCompare(a.batch));
  const done = o.cursor ?? doneThrough(recent);
  const now = o.now ?? Date.now();
  const pick = (status: BatchLogEntry['status']): MinuteId[] =>
    recent
      .filter((e) => e.status === status)
      .map((e) => e.batch)
      .sort();
  return {
    doneThrough: done,
    lagSeconds: done ? Math.round((now - minuteToMs(done) - 60_000) / 1000) : null,
    recent,
    failed: pick('failed'),
    missing: pick('missing'),
  };
}
