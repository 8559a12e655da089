/**
 * `signature_matches[]`, whose `authors` the spec types as a dictionary while describing it as
 * a list of authors. Canonical form: a list of strings.
 */
import { coerceString, type Coerce } from './coerceScalar.js';
import { entryOf, schemaOf, type EntryFn } from './coerceList.js';
import { kindOf, pathOf, type WarningLog } from './WarningLog.js';

/** Nesting followed inside `authors`; deeper containers are dropped (bounded recursion). */
const MAX_AUTHORS_DEPTH = 8;

/**
 * Appends the strings found in a list or dict (dict: values in key order), flattening nested
 * lists/dicts. Numbers are stringified (`coerced_scalar`); other items dropped (`dropped_item`).
 */
function collectStrings(v: object, path: string, depth: number, out: string[], w: WarningLog): void {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) collectOne(v[i], path, i, depth, out, w);
  } else {
    const rec = v as Record<string, unknown>;
    for (const k of Object.keys(rec)) collectOne(rec[k], path, k, depth, out, w);
  }
}

function collectOne(it: unknown, path: string, k: string | number, depth: number, out: string[], w: WarningLog): void {
  if (typeof it === 'string') {
    out.push(it);
  } else if (typeof it === 'number' && Number.isFinite(it)) {
    out.push(String(it));
    w.addAt('coerced_scalar', path, k, 'number stringified');
  } else if (typeof it === 'object' && it !== null && depth < MAX_AUTHORS_DEPTH) {
    collectStrings(it, pathOf(path, k), depth + 1, out, w);
  } else {
    w.addAt('dropped_item', path, k, `expected an author string, got ${kindOf(it)}`);
  }
}

/** `authors` as list, dict or lone string → list of strings. */
export const coerceAuthors: Coerce = (v, parent, key, w): string[] | undefined => {
  if (Array.isArray(v)) {
    let i = 0;
    while (i < v.length && typeof v[i] === 'string') i++;
    if (i === v.length) return v as string[];
  } else if (v === null || v === undefined) {
    return undefined;
  } else if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) {
    w.addAt('coerced_scalar', parent, key, `expected a list of strings, got a single ${typeof v}: wrapped`);
    return [String(v)];
  }
  if (typeof v === 'object' && v !== null) {
    const out: string[] = [];
    collectStrings(v, pathOf(parent, key), 1, out, w);
    return out;
  }
  w.addAt('dropped_field', parent, key, `expected a list of strings, got ${kindOf(v)}`);
  return undefined;
};

const str = coerceString;

/** One signature match. */
export const normalizeSignatureMatch: EntryFn = entryOf(
  schemaOf({ format: str, authors: coerceAuthors, rule_src: str, name: str, description: str }),
);
