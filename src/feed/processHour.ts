import { entrySource, minuteOfEntry } from './entrySource.js';
import type { DecoderChoice } from './decoders.js';
import type { FeedSource } from './FeedSource.js';
import { minuteRange, type MinuteId } from '../minute/index.js';
import type { SinkDoc } from '../wire/index.js';
import { processBatch, type BatchOutcome, type ProcessBatchOptions } from './processBatch.js';

export interface ProcessHourOptions extends Omit<ProcessBatchOptions, 'source' | 'batch' | 'emitChunk' | 'skipLines'> {
  source: FeedSource;
  /** `YYYYMMDDhh`. */
  hour: string;
  decoder?: DecoderChoice;
  emitChunk(minute: MinuteId, n: number, docs: readonly SinkDoc[]): Promise<void>;
  /** Receives each minute's outcome (every minute of the hour, missing ones included). */
  record(outcome: BatchOutcome): Promise<void>;
}

export interface HourOutcome {
  perMinute: Record<MinuteId, number>;
  accepted: number;
  rejected: number;
  chunks: number;
}

/**
 * The feed stage over an hourly package: each minute entry runs through processBatch as its
 * own batch (same batch log, same dead-letter ids, same index job ids as minute jobs), and
 * minutes the package lacks are recorded missing. Null when the package itself is absent.
 */
export async function processHour(o: ProcessHourOptions): Promise<HourOutcome | null> {
  const entries = await o.source.openHour?.(o.hour);
  if (!entries) return null;
  const out: HourOutcome = { perMinute: {}, accepted: 0, rejected: 0, chunks: 0 };
  for await (const entry of entries) {
    const minute = minuteOfEntry(entry.name);
    if (!minute || minute.slice(0, 10) !== o.hour || minute in out.perMinute) continue;
    const outcome = await processBatch({
      ...o,
      source: entrySource(minute, entry, o.decoder),
      batch: minute,
      emitChunk: (n, docs) => o.emitChunk(minute, n, docs),
    });
    await o.record({ ...outcome, source: o.source.spec });
    out.perMinute[minute] = outcome.chunks;
    out.accepted += outcome.accepted;
    out.rejected += outcome.rejected;
    out.chunks += outcome.chunks;
  }
  const now = Date.now();
  for (const minute of minuteRange(`${o.hour}00`, `${o.hour}59`)) {
    if (minute in out.perMinute) continue;
    out.perMinute[minute] = 0;
    await o.record({
      batch: minute,
      source: o.source.spec,
      status: 'missing',
      lines: 0,
      accepted: 0,
      rejected: 0,
      chunks: 0,
      bytesDecoded: 0,
      startedAt: now,
      finishedAt: now,
    });
  }
  return out;
}
