/**
 * Nesting limits. Everything downstream of the parser that walks a document (JSON.stringify,
 * the normalizer, structured clone, Elasticsearch's parser at 1,000 levels) recurses, so a record
 * nested deeper than the limit is refused up front with `too_deep` instead of overflowing a stack
 * somewhere a per-record error path cannot catch it. Both checks below are iterative.
 */

/**
 * Default nesting limit: above the deepest process tree the normalizer keeps (64 nodes, two JSON
 * levels each), far below any stack and Elasticsearch's parser.
 */
export const DEFAULT_MAX_DEPTH = 200;
/** Elasticsearch refuses documents nested deeper than this (Jackson's maxNestingDepth). */
export const ELASTICSEARCH_MAX_DEPTH = 1000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJ = 0x7b;
const OPEN_ARR = 0x5b;
const CLOSE_OBJ = 0x7d;
const CLOSE_ARR = 0x5d;

/**
 * Deepest container nesting of a JSON text, or `limit + 1` as soon as it goes past `limit`.
 * String contents are skipped with indexOf, so the scan costs little next to JSON.parse.
 * Text that is not valid JSON gives a meaningless but finite answer (the parser rejects it).
 */
export function textDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // jump to the closing quote: one not preceded by an odd run of backslashes
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) return max;
        let k = j - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      i = j;
    } else if (c === OPEN_OBJ || c === OPEN_ARR) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) {
      depth--;
    }
  }
  return max;
}

/** Deepest container nesting of a parsed value (iterative), or `limit + 1` once past `limit`. */
export function valueDepth(value: unknown, limit: number): number {
  if (typeof value !== 'object' || value === null) return 0;
  const stack: Array<[object, number]> = [[value, 1]];
  let max = 0;
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [object, number];
    if (d > max) {
      max = d;
      if (max > limit) return max;
    }
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push([c, d + 1]);
  }
  return max;
}
