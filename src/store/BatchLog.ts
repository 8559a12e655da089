import type { MinuteId } from '../minute/index.js';

/**
 * Outcome of one feed batch. `missing` is a normal event (the feed skips minutes), not an error.
 * `pending`: the feed stage finished and queued its chunks, but not every chunk is in the store
 * yet; a batch reads `ok` only once every one of its chunks has been stored.
 */
export type BatchStatus = 'ok' | 'empty' | 'missing' | 'failed' | 'pending';

export interface BatchLogEntry {
  /** A feed minute `YYYYMMDDhhmm`, or the key of other work that queues chunks (`lookup-<hash>`). */
  batch: MinuteId | string;
  source: string;
  status: BatchStatus;
  /** Lines read (blank lines excluded). */
  lines: number;
  accepted: number;
  rejected: number;
  chunks: number;
  bytesDecoded: number;
  error: string | null;
  startedAt: number;
  finishedAt: number;
}

/**
 * Durable record of what happened to each batch; `record` overwrites, so re-runs converge.
 * An entry recorded `ok` with chunks reads `pending` until `chunkStored` has been called for
 * each of its chunks 0..chunks-1 (in any order, before or after `record`, any number of times),
 * and `failed` (with the chunk's reason as its error) while one of them is marked by
 * `chunkFailed` and not stored since: a re-run that stores the chunk settles the entry again.
 */
export interface BatchLog {
  record(entry: BatchLogEntry): Promise<void>;
  /**
   * Chunk n of the batch is in the store (its documents written or dead-lettered), `records` of
   * them written (new or already there in a newer version). Idempotent; clears a failure mark.
   */
  chunkStored(batch: string, n: number, records?: number): Promise<void>;
  /** Chunk n of the batch could not be stored (a store fault, retries spent): its batch reads failed with `reason`. */
  chunkFailed(batch: string, n: number, reason: string): Promise<void>;
  /** Chunks of the batch recorded as stored, among 0..below-1. */
  storedChunks(batch: string, below: number): Promise<number[]>;
  /** Documents written by the stored chunks of the batch among 0..below-1 (what they recorded). */
  storedRecords(batch: string, below: number): Promise<number>;
  get(batches: readonly string[]): Promise<BatchLogEntry[]>;
  /** The `limit` entries finished last (feed minutes and other batches alike). */
  recent(limit: number): Promise<BatchLogEntry[]>;
  /**
   * The entries of the `limit` newest feed minutes (`YYYYMMDDhhmm`), newest first, whenever they
   * finished: a backfill of older minutes or a run of lookups does not push the live edge out.
   */
  minutes(limit: number): Promise<BatchLogEntry[]>;
}

/** The entry of a batch that failed before any of its records was counted (no lines, no chunks), with the reason. */
export function failedEntry(batch: string, source: string, error: string, startedAt: number, finishedAt = Date.now()): BatchLogEntry {
  return { batch, source, status: 'failed', lines: 0, accepted: 0, rejected: 0, chunks: 0, bytesDecoded: 0, error, startedAt, finishedAt };
}
