import { HUNT_LIMITS, type HuntReader, type PivotKind, type PivotStats } from '../store/index.js';
import { decodeAfterCursor, encodeAfterCursor } from './envelope.js';

/** Where a pivot page ended: the last behaviour it gave, and the place of the next one (an estimate). */
export interface PivotAnchor {
  offset: number;
  date: number | null;
  id: string;
}

/**
 * How far the behaviours before an anchor may have moved between two pages (stored or expired
 * meanwhile) and still be found in one read around it; past that, the whole window is read.
 */
const SLACK = 200;

/** The cursor of the page after `anchor`. */
export function encodePivotCursor(anchor: PivotAnchor): string {
  return encodeAfterCursor(JSON.stringify([anchor.offset, anchor.date, anchor.id]));
}

/** The anchor a pivot cursor names, or null when it is not one of ours. */
export function decodePivotCursor(cursor: string): PivotAnchor | null {
  const text = decodeAfterCursor(cursor);
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    if (!Array.isArray(v) || v.length !== 3) return null;
    const [offset, date, id] = v as unknown[];
    if (!Number.isSafeInteger(offset) || (offset as number) < 0) return null;
    if (date !== null && !Number.isSafeInteger(date)) return null;
    return typeof id === 'string' ? { offset: offset as number, date: date as number | null, id } : null;
  } catch {
    return null;
  }
}

/** True when `line` comes after `anchor` in the newest-first order (analysis date descending, undated last, then id). */
function isAfter(line: { analysis_date: number | null; id: string }, a: PivotAnchor): boolean {
  const d = line.analysis_date;
  if (d !== a.date) return a.date === null ? false : d === null ? true : d < a.date;
  return line.id > a.id;
}

/**
 * A page of a value's newest behaviours: the first `limit`, or those after `anchor`. The anchor is
 * found around its offset, so behaviours stored or expired between two pages repeat or skip none.
 * `start` is the page's place among the value's behaviours.
 */
export async function pivotPage(
  hunt: Pick<HuntReader, 'pivotStats'>,
  kind: PivotKind,
  value: string,
  limit: number,
  anchor?: PivotAnchor,
): Promise<{ stats: PivotStats; start: number }> {
  const window = HUNT_LIMITS.window;
  if (!anchor) return { stats: await hunt.pivotStats(kind, value, { limit: Math.min(limit, window), offset: 0 }), start: 0 };
  let lo = Math.max(0, anchor.offset - SLACK);
  let size = Math.min(limit + 2 * SLACK, window - lo);
  let stats = await hunt.pivotStats(kind, value, { limit: size, offset: lo });
  let i = stats.newest.findIndex((l) => isAfter(l, anchor));
  // found between a line at or before the anchor and one after it, or at an end of what can be read
  const found = (i > 0 || lo === 0) && (i !== -1 || stats.newest.length < size || lo + size >= window);
  if (!found) {
    lo = 0;
    size = window;
    stats = await hunt.pivotStats(kind, value, { limit: size, offset: 0 });
    i = stats.newest.findIndex((l) => isAfter(l, anchor));
  }
  if (i === -1) i = stats.newest.length;
  const newest = stats.newest.slice(i, i + limit);
  return { stats: { ...stats, newest, offset: lo + i, limit }, start: lo + i };
}
