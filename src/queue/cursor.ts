import { SandtrailError } from '../errors/index.js';
import { isMinuteId, type MinuteId } from '../minute/index.js';

/** A feed position as the official clients write it: `YYYYMMDDhhmm-N`, N lines of that minute already consumed. */
export interface FeedCursor {
  minute: MinuteId;
  consumed: number;
}

/** Parses `YYYYMMDDhhmm` or `YYYYMMDDhhmm-N`; throws USAGE with the expected form. */
export function parseCursor(s: string): FeedCursor {
  const m = /^(\d{12})(?:-(\d+))?$/.exec(s.trim());
  if (!m || !isMinuteId(m[1] as string))
    throw new SandtrailError('USAGE', `"${s}" is not a feed cursor: expected YYYYMMDDhhmm or YYYYMMDDhhmm-N`);
  return { minute: m[1] as MinuteId, consumed: m[2] ? Number(m[2]) : 0 };
}

/** Formats a cursor in the official clients' form. */
export function formatCursor(c: FeedCursor): string {
  return `${c.minute}-${c.consumed}`;
}
