/** A feed batch is identified by its UTC minute, written `YYYYMMDDhhmm` (12 digits). */
export type MinuteId = string;

const MINUTE_RE = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})$/;

/** True when `s` is a well-formed, real UTC minute `YYYYMMDDhhmm`. */
export function isMinuteId(s: string): boolean {
  const m = MINUTE_RE.exec(s);
  if (!m) return false;
  const t = minuteToMs(s);
  return Number.isFinite(t) && msToMinute(t) === s;
}

/** Unix seconds of the start of a batch's minute; undefined for a batch that is not a minute (`lookup-…`). */
export function minuteStartSeconds(batch: string): number | undefined {
  const ms = minuteToMs(batch);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/** Epoch milliseconds of the start of a minute id (NaN when malformed). */
export function minuteToMs(s: MinuteId): number {
  const m = MINUTE_RE.exec(s);
  if (!m) return Number.NaN;
  const [, y, mo, d, h, mi] = m;
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi));
}

/** Minute id of the minute containing epoch milliseconds `ms`. */
export function msToMinute(ms: number): MinuteId {
  const d = new Date(ms);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${p(d.getUTCFullYear(), 4)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}`;
}

/** Adds `n` minutes to a minute id. */
export function addMinutes(s: MinuteId, n: number): MinuteId {
  return msToMinute(minuteToMs(s) + n * 60_000);
}

/** Every minute id from `from` to `to`, both included. */
export function* minuteRange(from: MinuteId, to: MinuteId): Generator<MinuteId> {
  const end = minuteToMs(to);
  for (let t = minuteToMs(from); t <= end; t += 60_000) yield msToMinute(t);
}
