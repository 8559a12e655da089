/**
 * The pipeline stage that gave up on a record. `watch`: a watch hit whose notification could not
 * be delivered (its raw text is the notification's JSON; `dlq replay` leaves such entries alone).
 */
export type DeadLetterStage = 'normalize' | 'index' | 'watch';

/**
 * A record sandtrail could not process, kept with everything needed to understand and replay
 * it: the raw line (or the normalized document for index failures), where it came from and why.
 */
export interface DeadLetter {
  /** Deterministic: `normalize:<batch>:<line>` or `index:<batch>:<docId>`, so re-runs overwrite. */
  id: string;
  stage: DeadLetterStage;
  batch: string;
  line: number | null;
  docId: string | null;
  code: string;
  path: string | null;
  message: string;
  /** Raw text (utf8), or base64 when the bytes were not valid UTF-8. */
  raw: string;
  rawEncoding: 'utf8' | 'base64';
  /** Size in bytes of the whole original line; larger than `raw` when only a prefix was kept. */
  rawSize: number;
  /** SHA-256 (hex) of the whole original line, so a truncated entry still names it exactly. */
  rawSha256: string | null;
  /** Only a prefix of the line is kept: replaying it needs the source batch again. */
  rawTruncated: boolean;
  createdAt: number;
  updatedAt: number;
}

export type DeadLetterInput = Omit<DeadLetter, 'createdAt' | 'updatedAt' | 'rawSha256'> & { rawSha256?: string | null };
export type DeadLetterSummary = Omit<DeadLetter, 'raw'>;

/** What `list` can narrow on. */
export interface DeadLetterFilter {
  stage?: DeadLetterStage;
  batch?: string;
}

/** Durable home of dead letters. `put` is idempotent by id. */
export interface DeadLetterStore {
  put(entries: readonly DeadLetterInput[]): Promise<void>;
  get(id: string): Promise<DeadLetter | null>;
  list(opts?: DeadLetterFilter & { limit?: number; offset?: number }): Promise<DeadLetterSummary[]>;
  /** Every entry, oldest first, streamed in pages so replay of a large store stays bounded. */
  iterate(pageSize?: number): AsyncIterable<DeadLetter>;
  remove(ids: readonly string[]): Promise<number>;
  purge(): Promise<number>;
  count(filter?: { stage?: DeadLetterStage; batch?: string; batches?: readonly string[] }): Promise<number>;
  /** How many entries of each code were written at or after `sinceMs` (epoch ms), most first, ties by code. */
  codes(sinceMs: number): Promise<{ code: string; count: number }[]>;
}

/** Builds the deterministic id of a dead letter. */
export function deadLetterId(stage: DeadLetterStage, batch: string, key: number | string): string {
  return `${stage}:${batch}:${key}`;
}
