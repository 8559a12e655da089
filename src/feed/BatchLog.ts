import type { MinuteId } from './minute.js';

/** Final outcome of one feed batch. `missing` is a normal event (the feed skips minutes), not an error. */
export type BatchStatus = 'ok' | 'empty' | 'missing' | 'failed';

export interface BatchLogEntry {
  batch: MinuteId;
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

/** Durable record of what happened to each batch; `record` overwrites, so re-runs converge. */
export interface BatchLog {
  record(entry: BatchLogEntry): Promise<void>;
  get(batches: readonly MinuteId[]): Promise<BatchLogEntry[]>;
  recent(limit: number): Promise<BatchLogEntry[]>;
}
