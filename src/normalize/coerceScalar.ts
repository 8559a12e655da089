/**
 * Scalar coercers. Each takes the raw value plus where it sits (parent path and key, joined
 * only when a warning is recorded, so the common clean case allocates nothing), and returns
 * the canonical value or `undefined` to omit the field.
 *
 * Shared rules: `null`/`undefined` mean "absent" and are omitted without a warning (null
 * carries no information and JSON producers emit it for "no value"); a repair that keeps the
 * information is `coerced_scalar`; a value that cannot be repaired is omitted with
 * `dropped_field`.
 */
import { kindOf, type WarningLog } from './WarningLog.js';

/** Signature shared by every field coercer; `undefined` means "omit this field". */
export type Coerce = (value: unknown, parent: string, key: string | number, w: WarningLog) => unknown;

// Unambiguous (no nested quantifiers over the same characters), so it runs in linear time
// even on hostile input; the length cap below bounds it further.
const NUMERIC_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const MAX_NUMERIC_LENGTH = 40;

/** Parses a decimal numeric string (surrounding blanks allowed); NaN when it is not one. */
export function parseNumeric(s: string): number {
  if (s.length > MAX_NUMERIC_LENGTH) return Number.NaN;
  const t = s.trim();
  return NUMERIC_RE.test(t) ? Number(t) : Number.NaN;
}

/** Keeps strings; stringifies finite numbers and booleans (`coerced_scalar`); drops the rest. */
export const coerceString: Coerce = (v, parent, key, w): string | undefined => {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return undefined;
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') {
    w.addAt('coerced_scalar', parent, key, `expected a string, got ${typeof v}: stringified`);
    return String(v);
  }
  w.addAt('dropped_field', parent, key, `expected a string, got ${kindOf(v)}`);
  return undefined;
};

/**
 * Keeps integers; truncates floats and parses numeric strings (`coerced_scalar`); drops the
 * rest. Never returns -0: it would not survive a JSON round trip unchanged.
 */
export const coerceInt: Coerce = (v, parent, key, w): number | undefined => {
  if (typeof v === 'number' && Number.isInteger(v)) return v === 0 ? 0 : v;
  if (v === null || v === undefined) return undefined;
  let n = Number.NaN;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') n = parseNumeric(v);
  if (Number.isFinite(n)) {
    const t = Math.trunc(n);
    w.addAt(
      'coerced_scalar',
      parent,
      key,
      `expected an integer, got ${typeof v === 'string' ? 'a numeric string' : 'a fraction'}: converted`,
    );
    return t === 0 ? 0 : t;
  }
  w.addAt('dropped_field', parent, key, `expected an integer, got ${kindOf(v)}`);
  return undefined;
};

/** 9999-12-31T23:59:59Z: the last second a calendar date (and a day partition's name) can spell. */
export const MAX_EPOCH_SECONDS = 253_402_300_799;

/**
 * A Unix time in seconds, coerced as an integer and kept only within 1970 to 9999. A negative
 * value, or one in milliseconds (any date after 1977 in milliseconds is past year 9999 in
 * seconds), is dropped (`dropped_field`): kept, it would sort above every real update of the
 * behaviour and never expire.
 */
export const coerceEpochSeconds: Coerce = (v, parent, key, w): number | undefined => {
  const n = coerceInt(v, parent, key, w) as number | undefined;
  if (n === undefined || (n >= 0 && n <= MAX_EPOCH_SECONDS)) return n;
  const why = n < 0 ? 'before 1970' : 'past year 9999 (a time in milliseconds?)';
  w.addAt('dropped_field', parent, key, `expected a Unix time in seconds, got ${n}: ${why}`);
  return undefined;
};

/** Keeps booleans; accepts 0/1 and the strings "true"/"false"/"1"/"0" (`coerced_scalar`). */
export const coerceBool: Coerce = (v, parent, key, w): boolean | undefined => {
  if (typeof v === 'boolean') return v;
  if (v === null || v === undefined) return undefined;
  let b: boolean | undefined;
  if (v === 1 || v === 0) b = v === 1;
  else if (typeof v === 'string' && v.length <= 8) {
    const s = v.trim().toLowerCase();
    if (s === 'true' || s === '1') b = true;
    else if (s === 'false' || s === '0') b = false;
  }
  if (b !== undefined) {
    w.addAt('coerced_scalar', parent, key, `expected a boolean, got ${kindOf(v)}: converted`);
    return b;
  }
  w.addAt('dropped_field', parent, key, `expected a boolean, got ${kindOf(v)}`);
  return undefined;
};

/** Lower-cases a hash string, recording `lowercased` when that changed it. */
export function lowerHash(s: string, parent: string, key: string | number, w: WarningLog): string {
  const lc = s.toLowerCase();
  if (lc !== s) w.addAt('lowercased', parent, key, 'hash was not lower-case');
  return lc;
}

/** A string field holding a hash: coerced like a string, then lower-cased. */
export const coerceHash: Coerce = (v, parent, key, w): string | undefined => {
  const s = coerceString(v, parent, key, w);
  return typeof s === 'string' ? lowerHash(s, parent, key, w) : undefined;
};

/**
 * Text form of a map value whose canonical type is string (sigma event values, headers,
 * certificate fields): numbers/booleans via String, objects/arrays as JSON. Undefined when
 * the value has no sensible text form (null, or JSON.stringify failing on hostile input).
 */
export function stringifyValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') return String(v);
  if (typeof v === 'object' && v !== null) {
    try {
      const s: unknown = JSON.stringify(v);
      return typeof s === 'string' ? s : undefined;
    } catch {
      // Cycles, BigInt or absurd nesting: there is no faithful text form, so the caller drops it.
      return undefined;
    }
  }
  return undefined;
}
