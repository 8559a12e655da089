import type { MinuteId } from '../minute/index.js';

export const FEED_QUEUE = 'feed';
export const INDEX_QUEUE = 'index';
/** Hash lookups (src/lookup) and artefact downloads (src/artefacts) have queues of their own. */
export const LOOKUP_QUEUE = 'lookup';
export const ARTEFACT_QUEUE = 'artefacts';
/** Every queue of a pipeline, as the dashboard and the queue gauges list them. */
export const PIPELINE_QUEUES = [FEED_QUEUE, INDEX_QUEUE, LOOKUP_QUEUE, ARTEFACT_QUEUE] as const;

/** Which artefacts to download for the reports a job reads (`--artefacts`, `--artefact-filter`, `--artefact-max-bytes`). */
export interface ArtefactChoice {
  kinds: string[];
  filter?: string;
  maxBytes?: number;
  /** The command run that asked: its downloads are counted for its own summary. */
  run?: string;
}

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
  /** Artefacts to download through the feed lines' links. */
  artefacts?: ArtefactChoice;
  /** The store the job's producer reads its outcome from (storeIdentity): a worker writing another refuses the job. */
  store?: string;
}

/** Index job data: one chunk of normalized documents, whose bytes wait in a Redis key of their own. */
export interface IndexJobData {
  /** The feed minute, or the key of the lookup that queued the chunk (`lookup-<hash>`). */
  batch: string;
  n: number;
  count: number;
  /** Redis key of the compressed chunk (chunkCodec): binary, so not in the job's JSON. */
  payloadKey: string;
  /** Compressed size of the chunk. */
  bytes: number;
  /** Size the chunk decodes to; the index worker refuses a payload that decodes to more. Absent in jobs of older versions. */
  rawBytes?: number;
  /** The store its producer writes (storeIdentity): an index worker writing another refuses the chunk. */
  store?: string;
}

export interface FeedJobResult {
  status: 'ok' | 'empty' | 'missing';
  chunks: number;
  /** Hourly jobs: index chunks per minute of the hour. */
  perMinute?: Record<MinuteId, number>;
  accepted: number;
  rejected: number;
  /** Every chunk was stored before the job completed (handed over in memory): no index job to wait for. */
  stored?: boolean;
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
export const indexJobId = (batch: string, n: number): string => `idx-${batch}-${n}`;

/** Redis key holding the payload of an index job (under the queue prefix). */
export const chunkKey = (prefix: string, jobId: string): string => `${prefix}:chunk:${jobId}`;

/** A chunk payload outlives its job at most this long (a run abandoned for a week is gone anyway). */
export const CHUNK_TTL_SECONDS = 7 * 24 * 3600;

/**
 * Every queue's event stream is capped at about this many entries (BullMQ trims it as it adds, by
 * whole stream nodes of 100). sandtrail reads no queue events (it polls job states), so a short
 * tail for an operator's look is enough; with BullMQ's default, 10,000 per queue, the streams
 * still grew after a simulated month (npm run soak:month: 26 events a day per queue there, some
 * 10,000 a day on the live feed).
 */
export const QUEUE_STREAMS = { events: { maxLen: 200 } } as const;
