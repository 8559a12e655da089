/**
 * The attribute table of the private file report: which coercer applies to each spec'd
 * attribute. Same policy and warning codes as the behaviour attributes (coerceScalar.ts):
 * lenient on types, every repair a warning, unknown attributes kept as given.
 */
import type { TridEntry } from './PrivateFileDoc.js';
import { coerceInt, coerceString, parseNumeric, type Coerce } from './coerceScalar.js';
import { coerceStringList } from './coerceList.js';
import { isRecord, kindOf, pathOf, setOwn, type WarningLog } from './WarningLog.js';

const SHA1_RE = /^[0-9a-fA-F]{40}$/;
const MD5_RE = /^[0-9a-fA-F]{32}$/;

/**
 * A hash of a fixed shape, lower-cased (`lowercased`). Anything else is dropped (`dropped_field`):
 * a hash is only ever compared exactly, so a repaired one (a number, a truncated string) would
 * match nothing or, worse, the wrong file.
 */
function hexHash(re: RegExp, what: string): Coerce {
  return (v, parent, key, w): string | undefined => {
    if (v === null || v === undefined) return undefined;
    if (typeof v !== 'string' || !re.test(v)) {
      w.addAt('dropped_field', parent, key, `expected ${what}, got ${typeof v === 'string' ? 'another string' : kindOf(v)}`);
      return undefined;
    }
    const lc = v.toLowerCase();
    if (lc !== v) w.addAt('lowercased', parent, key, 'hash was not lower-case');
    return lc;
  };
}

/** A byte count: an integer (coerced like every integer), never negative nor past 2^53. */
const coerceSize: Coerce = (v, parent, key, w): number | undefined => {
  const n = coerceInt(v, parent, key, w) as number | undefined;
  if (n === undefined) return undefined;
  if (n < 0 || n > Number.MAX_SAFE_INTEGER) {
    w.addAt('dropped_field', parent, key, 'size is negative or too large to be a byte count');
    return undefined;
  }
  return n;
};

/**
 * Exiftool metadata, string keys to string values. Numbers and booleans are stringified
 * (`coerced_scalar`: exiftool itself prints them, e.g. LineCount); objects, arrays and null
 * are dropped (`dropped_item`): the spec says strings, and a nested value would turn the
 * flat metadata map into an arbitrary tree.
 */
const coerceExiftool: Coerce = (v, parent, key, w): Record<string, string> | undefined => {
  if (v === null || v === undefined) return undefined;
  if (!isRecord(v)) {
    w.addAt('dropped_field', parent, key, `expected an object of strings, got ${kindOf(v)}`);
    return undefined;
  }
  const path = pathOf(parent, key);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const val = v[k];
    if (typeof val === 'string') setOwn(out, k, val);
    else if ((typeof val === 'number' && Number.isFinite(val)) || typeof val === 'boolean') {
      setOwn(out, k, String(val));
      w.addAt('coerced_scalar', path, k, `expected a string, got ${typeof val}: stringified`);
    } else {
      w.addAt('dropped_item', path, k, `expected a string, got ${kindOf(val)}`);
    }
  }
  return out as Record<string, string>;
};

/**
 * One TrID entry: `file_type` a string (numbers stringified), `probability` a number (numeric
 * strings parsed). Without both the entry says nothing and is dropped (`dropped_item`).
 * Unknown keys of an entry are kept, like unknown attributes.
 */
function tridEntry(raw: unknown, path: string, i: number, w: WarningLog): TridEntry | undefined {
  if (!isRecord(raw)) {
    w.addAt('dropped_item', path, i, `expected an object, got ${kindOf(raw)}`);
    return undefined;
  }
  const at = pathOf(path, i);
  const fileType = coerceString(raw.file_type, at, 'file_type', w) as string | undefined;
  if (fileType === undefined || fileType === '') {
    w.addAt('dropped_item', path, i, 'TrID entry without a file_type');
    return undefined;
  }
  let p = raw.probability;
  if (typeof p === 'string') {
    const n = parseNumeric(p);
    if (Number.isFinite(n)) {
      w.addAt('coerced_scalar', at, 'probability', 'expected a number, got a numeric string: converted');
      p = n;
    }
  }
  if (typeof p !== 'number' || !Number.isFinite(p)) {
    w.addAt('dropped_item', path, i, `TrID entry without a usable probability (got ${kindOf(raw.probability)})`);
    return undefined;
  }
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(raw)) if (raw[k] !== undefined) setOwn(out, k, raw[k]);
  out.file_type = fileType;
  out.probability = p === 0 ? 0 : p;
  return out as unknown as TridEntry;
}

/** TrID guesses: a list of entries; a lone entry is wrapped (`coerced_scalar`). */
const coerceTrid: Coerce = (v, parent, key, w): TridEntry[] | undefined => {
  if (v === null || v === undefined) return undefined;
  const path = pathOf(parent, key);
  let items: readonly unknown[];
  if (Array.isArray(v)) items = v;
  else if (isRecord(v)) {
    w.add('coerced_scalar', path, 'expected a list of objects, got a single object: wrapped');
    items = [v];
  } else {
    w.add('dropped_field', path, `expected a list of objects, got ${kindOf(v)}`);
    return undefined;
  }
  const out: TridEntry[] = [];
  for (let i = 0; i < items.length; i++) {
    const e = tridEntry(items[i], path, i, w);
    if (e !== undefined) out.push(e);
  }
  return out;
};

/** Kept whole, whatever its shape (the API does not document it); only null means absent. */
const keepAsGiven: Coerce = (v) => (v === null ? undefined : v);

/**
 * Attribute name → coercer (`sha256` is checked against the id by the caller). A Map, so
 * inherited names (`constructor`, `__proto__`) never match.
 */
export const PRIVATE_FILE_ATTRIBUTES: ReadonlyMap<string, Coerce> = new Map<string, Coerce>([
  ['sha1', hexHash(SHA1_RE, '40 hex characters')],
  ['md5', hexHash(MD5_RE, '32 hex characters')],
  ['size', coerceSize],
  ['magic', coerceString],
  ['tags', coerceStringList],
  ['exiftool', coerceExiftool],
  ['trid', coerceTrid],
  ['vhash', coerceString],
  ['ssdeep', coerceString],
  ['gti_assessment', keepAsGiven],
]);
