import type { MinuteId } from '../minute/index.js';
import type { TarEntry } from './readTar.js';

/** An open feed batch: decoded bytes, streamed. */
export interface BatchHandle {
  batch: MinuteId;
  /** Human-readable origin (a file path, a URL without credentials). */
  origin: string;
  /** Size of the stored (compressed) batch, when known. */
  storedBytes: number | null;
  /** Decoded bytes; each call starts a fresh read. */
  bytes(signal?: AbortSignal): AsyncIterable<Buffer>;
}

/**
 * Where feed batches come from (a directory of batch files, the GTI API). `spec` is safe to
 * put in job data: it never contains credentials; workers resolve it with their own settings.
 */
export interface FeedSource {
  readonly spec: string;
  /** Minutes this source holds within [from, to] (inclusive; open ends when omitted), ascending. */
  listMinutes(range?: { from?: MinuteId; to?: MinuteId }): Promise<MinuteId[]>;
  /** Opens one minute, or null when the source has no batch for it (a missing minute). */
  open(batch: MinuteId): Promise<BatchHandle | null>;
  /** Opens an hourly package (`YYYYMMDDhh`, a tar of minute files), entry by entry; null when absent. */
  openHour?(hour: string): Promise<AsyncIterable<TarEntry> | null>;
}
