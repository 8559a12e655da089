/**
 * List and map coercers, and the table-driven builder for object entries.
 *
 * Hot-path policy: a list or map that is already canonical is returned as is (the input was
 * just parsed and is discarded afterwards, so sharing it is safe and avoids copying large
 * lists); anything needing a repair is rebuilt in one pass from the first bad item on.
 */
import type { Coerce } from './coerceScalar.js';
import { stringifyValue } from './coerceScalar.js';
import { isRecord, kindOf, pathOf, setOwn, type WarningLog } from './WarningLog.js';

/**
 * List of strings. A lone string or number becomes a one-item list (`coerced_scalar`).
 * Items: finite numbers are stringified (`coerced_scalar`) because ids and codes are often
 * emitted as numbers and the text is still meaningful; every other non-string item is
 * dropped (`dropped_item`). Any other field type is dropped (`dropped_field`).
 */
export const coerceStringList: Coerce = (v, parent, key, w): string[] | undefined => {
  if (Array.isArray(v)) {
    const n = v.length;
    let i = 0;
    while (i < n && typeof v[i] === 'string') i++;
    if (i === n) return v as string[];
    return repairStringList(v, i, pathOf(parent, key), w);
  }
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) {
    w.addAt('coerced_scalar', parent, key, `expected a list of strings, got a single ${typeof v}: wrapped`);
    return [String(v)];
  }
  w.addAt('dropped_field', parent, key, `expected a list of strings, got ${kindOf(v)}`);
  return undefined;
};

function repairStringList(v: readonly unknown[], from: number, path: string, w: WarningLog): string[] {
  const out = v.slice(0, from) as string[];
  for (let i = from; i < v.length; i++) {
    const it = v[i];
    if (typeof it === 'string') out.push(it);
    else if (typeof it === 'number' && Number.isFinite(it)) {
      out.push(String(it));
      w.addAt('coerced_scalar', path, i, 'number stringified');
    } else {
      w.addAt('dropped_item', path, i, `expected a string, got ${kindOf(it)}`);
    }
  }
  return out;
}

/** List of hash strings: a string list whose items are lower-cased (`lowercased`). */
export const coerceHashList: Coerce = (v, parent, key, w): string[] | undefined => {
  const list = coerceStringList(v, parent, key, w) as string[] | undefined;
  if (list === undefined) return undefined;
  let out: string[] | undefined;
  for (let i = 0; i < list.length; i++) {
    const s = list[i] as string;
    const lc = s.toLowerCase();
    if (lc !== s) {
      // Copy on first change: `list` may be the caller's input array.
      out ??= list.slice();
      out[i] = lc;
      w.addAt('lowercased', pathOf(parent, key), i, 'hash was not lower-case');
    }
  }
  return out ?? list;
};

/**
 * Object of string values at `parent`/`key` (or at `parent` itself when `key` is undefined).
 * Non-string values are stringified (`coerced_scalar`, see stringifyValue) or, when they have
 * no text form (null), dropped (`dropped_item`).
 */
export function toStringMap(
  m: Record<string, unknown>,
  parent: string,
  key: string | number | undefined,
  w: WarningLog,
): Record<string, string> {
  const keys = Object.keys(m);
  let i = 0;
  while (i < keys.length && typeof m[keys[i] as string] === 'string') i++;
  if (i === keys.length) return m as Record<string, string>;
  const path = key === undefined ? parent : pathOf(parent, key);
  const out: Record<string, unknown> = {};
  for (let j = 0; j < keys.length; j++) {
    const k = keys[j] as string;
    const val = m[k];
    if (typeof val === 'string') {
      setOwn(out, k, val);
      continue;
    }
    const s = stringifyValue(val);
    if (s === undefined) {
      w.addAt('dropped_item', path, k, `expected a string, got ${kindOf(val)}`);
    } else {
      setOwn(out, k, s);
      w.addAt('coerced_scalar', path, k, `expected a string, got ${kindOf(val)}: stringified`);
    }
  }
  return out as Record<string, string>;
}

/** Object with string values (headers, certificate names); any other type is dropped. */
export const coerceStringMap: Coerce = (v, parent, key, w): Record<string, string> | undefined => {
  if (isRecord(v)) return toStringMap(v, parent, key, w);
  if (v === null || v === undefined) return undefined;
  w.addAt('dropped_field', parent, key, `expected an object of strings, got ${kindOf(v)}`);
  return undefined;
};

/** Normalizes one object entry found at `path`. */
export type EntryFn = (raw: Record<string, unknown>, path: string, w: WarningLog) => Record<string, unknown>;

/**
 * List of objects, each normalized by `entry`. A lone object becomes a one-item list
 * (`coerced_scalar`); non-object items are dropped (`dropped_item`).
 */
export function objectListOf(entry: EntryFn): Coerce {
  return (v, parent, key, w): Record<string, unknown>[] | undefined => {
    if (Array.isArray(v)) {
      const path = pathOf(parent, key);
      const out: Record<string, unknown>[] = [];
      for (let i = 0; i < v.length; i++) {
        const it: unknown = v[i];
        if (isRecord(it)) out.push(entry(it, `${path}[${i}]`, w));
        else w.addAt('dropped_item', path, i, `expected an object, got ${kindOf(it)}`);
      }
      return out;
    }
    if (v === null || v === undefined) return undefined;
    if (isRecord(v)) {
      const path = pathOf(parent, key);
      w.add('coerced_scalar', path, 'expected a list of objects, got a single object: wrapped');
      return [entry(v, path, w)];
    }
    w.addAt('dropped_field', parent, key, `expected a list of objects, got ${kindOf(v)}`);
    return undefined;
  };
}

/** Field table of an entry type: known field name → coercer. */
export type EntrySchema = ReadonlyMap<string, Coerce>;

/** Builds an EntrySchema from an object literal (a Map, so keys like `constructor` are safe). */
export function schemaOf(fields: Record<string, Coerce>): EntrySchema {
  return new Map(Object.entries(fields));
}

/**
 * Entry normalizer driven by `schema`: known fields are coerced, unknown fields copied
 * verbatim (by reference), in input key order, in one pass. `finish` fills the fields the
 * canonical form always carries.
 */
export function entryOf(schema: EntrySchema, finish?: (out: Record<string, unknown>) => void): EntryFn {
  return (raw, path, w) => {
    const out: Record<string, unknown> = {};
    const keys = Object.keys(raw);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const v = raw[k];
      const coerce = schema.get(k);
      if (coerce === undefined) {
        if (v !== undefined) setOwn(out, k, v);
      } else {
        const r = coerce(v, path, k, w);
        if (r !== undefined) out[k] = r;
      }
    }
    if (finish !== undefined) finish(out);
    return out;
  };
}
