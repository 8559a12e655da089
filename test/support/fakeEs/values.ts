/** Conversion of JSON values to what a field type indexes (and to query terms): numbers, dates, ips, booleans, text. */
import { isIP } from 'node:net';
import { NUMERIC, type Val } from './mapping.js';
import { isObj, type Cause, type Obj } from './util.js';

const INT_RANGE: Record<string, [number, number, string]> = {
  long: [-(2 ** 63), 2 ** 63 - 1, 'a long'],
  integer: [-2147483648, 2147483647, 'an integer'],
  short: [-32768, 32767, 'a short'],
  byte: [-128, 127, 'a byte'],
  unsigned_long: [0, 2 ** 64 - 1, 'an unsigned long'],
};
export function textTokens(s: string): string[] {
  return s
    .toLowerCase()
    .split(/[^\p{L}\p{N}_']+/u)
    .filter((t) => t !== '');
}

function parseNumber(type: string, v: unknown, coerce: boolean): number | Cause {
  let n: number;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string' && coerce && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(v)) n = Number(v);
  else if (typeof v === 'string') return { type: 'number_format_exception', reason: `For input string: "${v}"` };
  else
    return {
      type: 'x_content_parse_exception',
      reason: `Current token (${typeof v === 'boolean' ? `VALUE_${String(v).toUpperCase()}` : 'START_OBJECT'}) not numeric, can not use numeric value accessors`,
    };
  if (!Number.isFinite(n))
    return { type: 'illegal_argument_exception', reason: `[${type}] supports only finite values, but got [${String(v)}]` };
  const range = INT_RANGE[type];
  if (range) {
    if (!Number.isInteger(n)) {
      if (!coerce) return { type: 'illegal_argument_exception', reason: `Value [${String(v)}] has a decimal part` };
      n = Math.trunc(n);
    }
    if (n < range[0] || n > range[1])
      return { type: 'illegal_argument_exception', reason: `Value [${String(v)}] is out of range for ${range[2]}` };
  }
  return n;
}

export const ISO = /^[+-]?\d{4,}(-\d{2}(-\d{2}([T ]\d{2}(:\d{2}(:\d{2}([.,]\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2})?)?)?)?)?$/;

/** Epoch millis of a date value under a `format` (`a||b`), or the parse failure. */
export function parseDate(v: unknown, format: unknown): number | Cause {
  const formats = String(format ?? 'strict_date_optional_time||epoch_millis').split('||');
  for (const f of formats) {
    if (f === 'epoch_second' || f === 'epoch_millis') {
      const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : NaN;
      if (Number.isFinite(n)) return Math.floor(f === 'epoch_second' ? n * 1000 : n);
    } else if (typeof v === 'string') {
      const iso = ISO.exec(v);
      if (iso) {
        const zoned = /(Z|[+-]\d{2}:?\d{2})$/.test(v) || !v.includes('T') ? v : `${v}Z`;
        const t = Date.parse(zoned.replace(' ', 'T').replace(',', '.'));
        if (Number.isFinite(t)) return t;
      } else if (!/^(strict_)?(date|date_optional_time|date_time|date_hour_minute_second|basic_date|year|year_month_day)/.test(f)) {
        const t = Date.parse(v);
        if (Number.isFinite(t)) return t;
      }
    }
  }
  return {
    type: 'illegal_argument_exception',
    reason: `failed to parse date field [${String(v)}] with format [${formats.join('||')}]`,
    caused_by: { type: 'date_time_parse_exception', reason: `Failed to parse with all enclosed parsers` },
  };
}

/** The indexed value of a concrete JSON value for a leaf field, or why it is malformed. */
export function leafValue(type: string, m: Obj, v: unknown): Val | Cause {
  if (NUMERIC.has(type)) return parseNumber(type, v, m.coerce !== false);
  switch (type) {
    case 'date':
      return parseDate(v, m.format);
    case 'ip': {
      const s = typeof v === 'string' ? v.trim() : undefined;
      return s !== undefined && isIP(s) !== 0
        ? s.toLowerCase()
        : { type: 'illegal_argument_exception', reason: `'${String(v)}' is not an IP string literal.` };
    }
    case 'boolean':
      if (v === true || v === 'true') return true;
      if (v === false || v === 'false' || v === '') return false;
      return { type: 'illegal_argument_exception', reason: `Failed to parse value [${String(v)}] as only [true] or [false] are allowed.` };
    default:
      return String(v);
  }
}

export function isCause(v: unknown): v is Cause {
  return isObj(v) && typeof v.type === 'string';
}
