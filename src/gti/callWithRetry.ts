import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode, type ErrorCode } from '../errors/index.js';

/** Upstream failures worth another try inside one job: rate limits, 5xx, cut connections, mangled bodies. */
const RETRY_IN_PLACE: ReadonlySet<ErrorCode> = new Set(['GTI_RATE_LIMITED', 'GTI_TRANSIENT', 'GTI_NETWORK', 'GTI_BAD_RESPONSE']);
/** A mangled answer is asked for once more, not `retries` times: each try is a paid call that may well answer the same. */
const BAD_RESPONSE_RETRIES = 1;

export interface RetryOptions {
  /** Tries after the first (gti.maxRetries). */
  retries: number;
  /** First backoff; doubles each time, with full jitter (gti.backoffMs). */
  backoffMs: number;
  /** Longest single wait, Retry-After included. */
  maxWaitMs?: number;
  signal?: AbortSignal;
  /** Told about each retry (for a log line). */
  onRetry?: (info: { attempt: number; waitMs: number; code: string; message: string }) => void;
}

/**
 * Runs one upstream call (a whole request with its body, so a body cut mid-way is retried too),
 * retrying what the API asks to retry: a 429 waits its Retry-After when given, else an
 * exponential backoff. Refused credentials, 403, 404 and bad requests are thrown at once.
 */
export async function callWithRetry<T>(fn: () => Promise<T>, o: RetryOptions): Promise<T> {
  const maxWait = o.maxWaitMs ?? 120_000;
  let badResponses = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const code = errorCode(err);
      // `final`: an answer that would be the same however often it is asked (a redirect loop)
      const final = (err as { details?: { final?: unknown } }).details?.final === true;
      if (!code || final || !RETRY_IN_PLACE.has(code) || attempt >= o.retries) throw err;
      if (code === 'GTI_BAD_RESPONSE' && ++badResponses > BAD_RESPONSE_RETRIES) throw err;
      const retryAfterS = (err as { details?: { retryAfterS?: number } }).details?.retryAfterS;
      const waitMs = Math.min(
        maxWait,
        retryAfterS !== undefined ? retryAfterS * 1000 : Math.random() * o.backoffMs * 2 ** attempt + o.backoffMs / 2,
      );
      o.onRetry?.({ attempt: attempt + 1, waitMs, code, message: (err as Error).message });
      await sleep(waitMs, undefined, { signal: o.signal });
    }
  }
}
