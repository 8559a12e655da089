import { SandtrailError } from '../errors/index.js';

const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** What `--since` accepts, for help texts and errors. */
export const SINCE_FORMS = 'a time ago (30m, 24h, 7d, 2w) or a UTC date or time (YYYY-MM-DD, YYYYMMDD, ISO-8601)';

/**
 * `--since`: how long ago (`30m`, `24h`, `7d`, `2w`), or a UTC date (midnight) or time, as epoch
 * milliseconds. Anything else is a usage error naming the forms.
 */
export function parseSince(raw: string, now = Date.now()): number {
  const ago = /^(\d+)\s*(m|min|h|d|w)$/i.exec(raw.trim());
  if (ago) return now - Number(ago[1]) * (UNIT_MS[(ago[2] as string).toLowerCase()] as number);
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(raw);
  const iso = compact ? `${compact[1]}-${compact[2]}-${compact[3]}` : raw;
  // a bare date is its UTC midnight; Date.parse alone reads loose strings ("1" is 2001)
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(iso) ? Date.parse(`${iso}T00:00:00Z`) : /^\d{4}-\d{2}-\d{2}[T ]/.test(iso) ? Date.parse(iso) : NaN;
  if (!Number.isFinite(ms)) throw new SandtrailError('USAGE', `--since must be ${SINCE_FORMS}, got "${raw}"`);
  return ms;
}
