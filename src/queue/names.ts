import type { MinuteId } from '../minute/index.js';

export const FEED_QUEUE = 'feed';
export const INDEX_QUEUE = 'index';

/** Feed job data: which batch, from which source. Never credentials. */
export interface FeedJobData {
  batch: MinuteId;
  source: string;
  /** API source: how many times this minute answered 404 so far. */
  notFoundSeen?: number;
  /** Set for an hourly-package job: `YYYYMMDDhh` (then `batch` is the hour's first minute). */
  hour?: string;
  /** Lines of this minute already consumed (a cursor `YYYYMMDDhhmm-N` from the official clients). */
  skipLines?: number;
}

/** Index job data: one compressed chunk of normalized documents. */
export interface IndexJobData {
  batch: MinuteId;
  n: number;
  count: number;
  /** base64 of brotli-compressed JSON array of BehaviourDoc (BullMQ stores JSON, not bytes). */
  payload: string;
}

export interface FeedJobResult {
  status: 'ok' | 'empty' | 'missing';
  chunks: number;
  /** Hourly jobs: index chunks per minute of the hour. */
  perMinute?: Record<MinuteId, number>;
  accepted: number;
  rejected: number;
}

export interface IndexJobResult {
  indexed: number;
  stale: number;
  rejected: number;
  deadLettered: number;
}

/** Deterministic ids make every enqueue idempotent: adding an existing job id is a no-op. */
export const feedJobId = (batch: MinuteId): string => `feed-${batch}`;
export const hourJobId = (hour: string): string => `feed-h-${hour}`;
export const indexJobId = (batch: MinuteId, n: number): string => `idx-${batch}-${n}`;
