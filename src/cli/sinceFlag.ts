import { SandtrailError } from '../errors/index.js';

const UNIT_MS: Readonly<Record<string, number>> = { m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** What `--since` accepts, for help texts and errors. */
export const SINCE_FORMS = 'a time ago (30m, 24h, 7d, 2w) or a UTC date or time (YYYY-MM-DD, YYYYMMDD, ISO-8601)';

/** A date, optionally with a time and a zone; without a zone it is UTC (never the machine's zone). */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * `--since`: how long ago (`30m`, `24h`, `7d`, `2w`), or a UTC date (midnight) or time, as epoch
 * milliseconds. A time without a zone is UTC, as the feed's minutes are. Anything else, an
 * impossible date included (2026-02-30), is a usage error naming the forms.
 */
export function parseSince(raw: string, now = Date.now(), flag = '--since'): number {
  const text = raw.trim();
  const ago = /^(\d+)\s*(m|min|h|d|w)$/i.exec(text);
  if (ago) return now - Number(ago[1]) * (UNIT_MS[(ago[2] as string).toLowerCase()] as number);
  const compact = /^(\d{4})(\d{2})(\d{2})$/.exec(text);
  const ms = utcTime(compact ? `${compact[1]}-${compact[2]}-${compact[3]}` : text);
  if (ms === null) throw new SandtrailError('USAGE', `${flag} must be ${SINCE_FORMS}, got "${raw}"`);
  return ms;
}

function utcTime(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [y, mo, d, h = 0, mi = 0, sec = 0] = m.slice(1, 7).map((v) => (v === undefined ? undefined : Number(v)));
  const frac = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0'));
  const ms = Date.UTC(y as number, (mo as number) - 1, d as number, h, mi, sec, frac);
  // Date.UTC rolls 2026-02-30 over into March: a date that does not come back as given does not exist
  const back = new Date(ms);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() + 1 !== mo || back.getUTCDate() !== d) return null;
  if (h > 23 || mi > 59 || sec > 59) return null;
  return ms - offsetMs(m[8]);
}

/** A zone suffix (`Z`, `+02:00`, `-0530`) as milliseconds east of UTC. */
function offsetMs(zone: string | undefined): number {
  if (zone === undefined || zone.toUpperCase() === 'Z') return 0;
  const digits = zone.replace(':', '');
  const minutes = Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5));
  return (zone.startsWith('-') ? -1 : 1) * minutes * 60_000;
}
