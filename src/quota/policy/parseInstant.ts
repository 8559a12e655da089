// `YYYY-MM-DD`, optionally `THH:MM[:SS[.fff…]]`, optionally `Z` / `±HH:MM` / `±HHMM` after a time.
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Parses an ISO-8601 instant strictly (Date.parse accepts far too much, e.g. "1" or "2026-02-30").
 * A date-time without an offset is read as UTC, not local time: the quota periods are UTC and a
 * ledger must not change its answers with the machine's time zone. Returns null when malformed.
 */
export function parseInstant(s: string): Date | null {
  const m = ISO_RE.exec(s);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', off] = m;
  const parts = [y, mo, d, h, mi, sec].map(Number) as [number, number, number, number, number, number];
  const [year, month, day, hour, minute, second] = parts;
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  // setUTCFullYear, not Date.UTC, which reads the years 0 to 99 as 1900 to 1999
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  const local = date.getTime();
  // Date.UTC rolls Feb 30 over into March: a round trip exposes days the month does not have
  if (new Date(local).getUTCDate() !== day) return null;
  let offsetMin = 0;
  if (off !== undefined && off.toUpperCase() !== 'Z') {
    const digits = off.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2));
    if (oh > 23 || om > 59) return null;
    offsetMin = (off.startsWith('-') ? -1 : 1) * (oh * 60 + om);
  }
  const t = local - offsetMin * 60_000;
  return Number.isFinite(t) ? new Date(t) : null;
}
