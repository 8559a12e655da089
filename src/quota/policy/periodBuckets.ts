import type { QuotaKind } from './QuotaKind.js';

/** A quota period; API requests are limited per minute, day and month, every other kind per month. */
export type Period = 'minute' | 'day' | 'month';

/** One period bucket an operation's units land in: `2026-11-21T17:05`, `2026-11-21` or `2026-11` (UTC). */
export interface PeriodBucket {
  period: Period;
  bucket: string;
}

/**
 * The buckets units of `kind` consumed at `at` count in. The spec's Limits table limits API
 * requests per minute, day and month and rules 9 to 15 make every other kind monthly; all UTC,
 * so a day starts at 00:00Z and a month on the 1st at 00:00Z. Throws RangeError for an invalid Date.
 */
export function periodBuckets(kind: QuotaKind, at: Date): PeriodBucket[] {
  const iso = isoOf(at);
  const month: PeriodBucket = { period: 'month', bucket: iso.slice(0, 7) };
  if (kind !== 'api_requests') return [month];
  return [{ period: 'minute', bucket: iso.slice(0, 16) }, { period: 'day', bucket: iso.slice(0, 10) }, month];
}

/** The UTC month `YYYY-MM` containing `at` (the livehunt marks' key). */
export function monthOf(at: Date): string {
  return isoOf(at).slice(0, 7);
}

function isoOf(at: Date): string {
  const t = at.getTime();
  // toISOString writes 6-digit signed years outside 0000-9999, which would break the slicing
  if (!Number.isFinite(t) || at.getUTCFullYear() < 0 || at.getUTCFullYear() > 9999) {
    throw new RangeError(`quota period of an invalid or out-of-range date: ${String(at)}`);
  }
  return at.toISOString();
}
