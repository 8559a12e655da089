import { redactUrlCredentials } from './redactUrlCredentials.js';

/**
 * Every error sandtrail raises on purpose carries a stable `code`. Callers match on `code`
 * (or `name === 'SandtrailError'`), never only on `instanceof`, so errors crossing a worker
 * boundary (serialized into a BullMQ job's failedReason) stay recognizable.
 */
export type ErrorCode =
  // configuration and usage
  | 'CONFIG_INVALID'
  | 'USAGE'
  // components
  | 'REDIS_UNAVAILABLE'
  | 'REDIS_FORBIDDEN'
  | 'DECODER_UNAVAILABLE'
  | 'DECODE_FAILED'
  | 'BATCH_CORRUPT'
  | 'BATCH_TOO_LARGE'
  | 'DEAD_LETTERS_EXCEEDED'
  | 'QUEUE_STATE_LOST'
  | 'SOURCE_READ_FAILED'
  | 'SOURCE_NOT_FOUND'
  | 'SINK_UNAVAILABLE'
  | 'SINK_WRITE_FAILED'
  | 'SINK_BUSY'
  | 'SINK_AUTH'
  | 'STORE_FULL'
  | 'STORE_IO'
  | 'STORE_DAMAGED'
  | 'STORE_READONLY'
  | 'STORE_LOCKED'
  | 'CHUNK_CORRUPT'
  | 'INDEX_THREAD_FAILED'
  | 'NOT_FOUND'
  | 'SHUTTING_DOWN'
  // upstream GTI API
  | 'GTI_AUTH'
  | 'GTI_FORBIDDEN'
  | 'GTI_NOT_FOUND'
  | 'GTI_NOT_AVAILABLE_YET'
  | 'GTI_RATE_LIMITED'
  | 'GTI_TRANSIENT'
  | 'GTI_BAD_REQUEST'
  | 'GTI_NETWORK'
  | 'GTI_BAD_RESPONSE'
  // artefacts
  | 'ARTEFACT_TOO_LARGE'
  // watchlists
  | 'WATCH_EXISTS'
  | 'WEBHOOK_FAILED'
  | 'WATCH_FILE_FAILED'
  // quota
  | 'BUDGET_EXCEEDED'
  // a file a command writes (an export's --out)
  | 'OUTPUT_FAILED';

/** Base class of every deliberate error; `code` is stable and documented. */
export class SandtrailError extends Error {
  override readonly name = 'SandtrailError';
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    // a URL's password quoted by a library's message must not travel on (logs, job reasons, the store)
    super(redactUrlCredentials(message), options);
    this.code = code;
    this.details = Object.freeze({ ...details });
  }
}

/**
 * The one table deciding whether a failure is worth retrying. Retryable failures are
 * transient (a busy database, a decoder killed mid-stream, a flaky read); permanent ones
 * will fail the same way again and must go to a dead-letter path or stop the process.
 */
const RETRYABLE: Readonly<Record<ErrorCode, boolean>> = Object.freeze({
  CONFIG_INVALID: false,
  USAGE: false,
  REDIS_UNAVAILABLE: true,
  // an ACL user without a command or key pattern the pipeline needs: only an operator's grant helps
  REDIS_FORBIDDEN: false,
  DECODER_UNAVAILABLE: false,
  // the decoder died mid-stream (killed, out of memory): the same file may decode next time
  DECODE_FAILED: true,
  // a file at rest that is truncated, corrupt or not bzip2/gzip at all decodes the same way every time
  BATCH_CORRUPT: false,
  // a batch decoding past feed.maxBatchBytes (a decompression bomb) or dead-lettering past
  // feed.dlqMaxBatchBytes: the next try would do the same
  BATCH_TOO_LARGE: false,
  DEAD_LETTERS_EXCEEDED: false,
  // Redis lost the jobs of a run (restarted empty, flushed, evicted): only a re-run recovers
  QUEUE_STATE_LOST: false,
  SOURCE_READ_FAILED: true,
  SOURCE_NOT_FOUND: false,
  SINK_UNAVAILABLE: true,
  SINK_WRITE_FAILED: true,
  SINK_BUSY: true,
  // refused credentials or privileges: retrying cannot help until an operator fixes them
  SINK_AUTH: false,
  // the store's disk is full (SQLite's SQLITE_FULL, Elasticsearch's flood-stage block): space
  // freed by an operator, a checkpoint or a merge lets a later try pass, so a few tries are made
  STORE_FULL: true,
  // the store's file could not be read or written (EIO, a failing fsync): maybe once
  STORE_IO: true,
  // a damaged store (corrupt pages, not a database at all) fails the same way until repaired
  STORE_DAMAGED: false,
  // a store that cannot be written as configured (read-only file or index, permissions, a
  // closed or missing index): only an operator's fix helps
  STORE_READONLY: false,
  // another process held the store's write lock through the whole busy timeout (a long
  // transaction, a VACUUM, a stuck tool): it may let go, so a few tries are made
  STORE_LOCKED: true,
  CHUNK_CORRUPT: false,
  // the index stage's thread of this process died with chunks in hand: the process stops, and the
  // minutes whose chunks it held are taken again (by the next run, or by another worker)
  INDEX_THREAD_FAILED: true,
  NOT_FOUND: false,
  SHUTTING_DOWN: true,
  GTI_AUTH: false,
  GTI_FORBIDDEN: false,
  GTI_NOT_FOUND: false,
  GTI_NOT_AVAILABLE_YET: true,
  GTI_RATE_LIMITED: true,
  GTI_TRANSIENT: true,
  GTI_BAD_REQUEST: false,
  GTI_NETWORK: true,
  // an answer that is not the JSON it should be (a proxy's error page, a mangled body, a cursor
  // given twice): asked once more in place (callWithRetry), never again by a job's retry, since
  // each try is paid for
  GTI_BAD_RESPONSE: false,
  // the artefact is bigger than artefacts.maxBytes: it will be as big next time
  ARTEFACT_TOO_LARGE: false,
  // a watch of that name is already stored: adding it again cannot succeed until it is removed
  WATCH_EXISTS: false,
  // a receiver that answered 5xx or timed out may take the notification later (its dead letter keeps it)
  WEBHOOK_FAILED: true,
  // a full disk or a permission fixed by an operator
  WATCH_FILE_FAILED: true,
  BUDGET_EXCEEDED: false,
  // a full disk or a failing device under the output file: the command ends, nothing is retried
  OUTPUT_FAILED: false,
});

/** Reads the stable code of any thrown value, or undefined for foreign errors. */
export function errorCode(err: unknown): ErrorCode | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === 'string' && code in RETRYABLE) return code as ErrorCode;
  }
  return undefined;
}

/** True when the failure is transient. Unknown errors count as retryable: a bug is retried a few times, then dead-lettered. */
export function isRetryable(err: unknown): boolean {
  const code = errorCode(err);
  return code === undefined ? true : RETRYABLE[code];
}

/**
 * Codes of failures that are the store's, never a record's: a batch meeting one fails (after the
 * tries its code allows) with the cause, and none of its records is dead-lettered for it.
 */
export const STORE_FAULT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'STORE_FULL',
  'STORE_IO',
  'STORE_DAMAGED',
  'STORE_READONLY',
  'STORE_LOCKED',
  'SINK_AUTH',
]);

/** True when the thrown value is a store fault (see STORE_FAULT_CODES). */
export function isStoreFault(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && STORE_FAULT_CODES.has(code);
}

/**
 * The store-fault code a failure message starts with (`STORE_FULL: disk full ...`), as BullMQ
 * keeps a failed job's reason: a job's failure is told apart after it crossed a process boundary.
 */
export function storeFaultOfReason(reason: string | undefined): ErrorCode | undefined {
  const m = /^([A-Z_]+): /.exec(reason ?? '');
  const code = m?.[1] as ErrorCode | undefined;
  return code !== undefined && STORE_FAULT_CODES.has(code) ? code : undefined;
}

/** Message of any thrown value, for logs and dead-letter entries. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Errors already written to the log as a process's fatal line (a stage runner says it first). */
const logged = new WeakSet<object>();

/** Marks `err` as logged as fatal, so the process's last word does not repeat it. */
export function markLogged(err: unknown): void {
  if (typeof err === 'object' && err !== null) logged.add(err);
}

/** Whether `err` was already logged as fatal (markLogged). */
export function wasLogged(err: unknown): boolean {
  return typeof err === 'object' && err !== null && logged.has(err);
}
