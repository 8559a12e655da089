import { SandtrailError, type ErrorCode } from '../errors/index.js';

/** Upstream error codes (from `{"error": {"code"}}`) → our stable codes. */
const BY_UPSTREAM: Readonly<Record<string, ErrorCode>> = {
  WrongCredentialsError: 'GTI_AUTH',
  AuthenticationRequiredError: 'GTI_AUTH',
  ForbiddenError: 'GTI_FORBIDDEN',
  NotFoundError: 'GTI_NOT_FOUND',
  NotAvailableYet: 'GTI_NOT_AVAILABLE_YET',
  QuotaExceededError: 'GTI_RATE_LIMITED',
  TooManyRequestsError: 'GTI_RATE_LIMITED',
  TransientError: 'GTI_TRANSIENT',
  DeadlineExceededError: 'GTI_TRANSIENT',
};

/** The stable code of an API error answer: its upstream code (`{"error": {"code"}}`) first, else its status. */
export function codeFor(status: number, upstream: string | undefined): ErrorCode {
  if (upstream && BY_UPSTREAM[upstream]) return BY_UPSTREAM[upstream];
  if (status === 401) return 'GTI_AUTH';
  if (status === 403) return 'GTI_FORBIDDEN';
  if (status === 404) return 'GTI_NOT_FOUND';
  if (status === 429) return 'GTI_RATE_LIMITED';
  if (status >= 500) return 'GTI_TRANSIENT';
  return 'GTI_BAD_REQUEST';
}

/** A download's file is gone: its link expired (410) or never was (404). */
export const isGone = (status: number): boolean => status === 404 || status === 410;

/**
 * Why a host other than the API (a storage host a download redirects to, a feed link's host)
 * refused a download: asked again only for what may pass (408, 425, 5xx; a 429 after its
 * Retry-After); refused access (401, 403) and any other answer are final, never paid for again.
 */
export function downloadRefused(res: Response, what: string): SandtrailError {
  const s = res.status;
  const code: ErrorCode =
    s === 429
      ? 'GTI_RATE_LIMITED'
      : s === 408 || s === 425 || s >= 500
        ? 'GTI_TRANSIENT'
        : s === 401 || s === 403
          ? 'GTI_FORBIDDEN'
          : 'GTI_BAD_REQUEST';
  return new SandtrailError(code, `${what}: ${s}`, { status: s, retryAfterS: Number(res.headers.get('retry-after')) || undefined });
}

/**
 * A fetch that failed without an answer is worth asking again (GTI_NETWORK), except a storage
 * host's redirects that never end (fetch gives up after 20): asking again would pay the API's
 * hop to it each time, for the same loop (GTI_BAD_RESPONSE, `final`: not asked again).
 */
export function networkError(err: unknown, message: string): SandtrailError {
  const cause = (err as { cause?: { message?: string } }).cause?.message ?? '';
  return /redirect count exceeded/i.test(cause)
    ? new SandtrailError('GTI_BAD_RESPONSE', message, { final: true })
    : new SandtrailError('GTI_NETWORK', message);
}

/** Why a fetch failed, with the cause undici keeps apart ("fetch failed" alone names nothing). */
export function failure(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs} ms (gti.timeoutMs)`;
  const cause = e.cause?.code ?? e.cause?.message;
  return cause && !e.message.includes(cause) ? `${e.message} (${cause})` : e.message;
}
