/** Small helpers shared by the pieces of the fake Elasticsearch. */

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An Elasticsearch error cause (`error` of a response or of a bulk item). */
export interface Cause {
  type: string;
  reason: string;
  [key: string]: unknown;
}

/** `{ error: { root_cause, type, reason, ... }, status }`, the shape of every Elasticsearch error response. */
export function errorBody(status: number, cause: Cause, rootCause: Cause = cause): { error: Obj; status: number } {
  const root: Obj = { ...rootCause };
  delete root.caused_by;
  return { error: { root_cause: [root], ...cause }, status };
}

/** Thrown anywhere in the fake; becomes the HTTP response (or the bulk item) it describes. */
export class EsError extends Error {
  readonly body: unknown;
  constructor(
    readonly status: number,
    readonly esCause: Cause,
    body?: unknown,
  ) {
    super(`${esCause.type}: ${esCause.reason}`);
    this.body = body ?? errorBody(status, esCause);
  }
}

export function fail(status: number, type: string, reason: string, extra: Obj = {}): never {
  throw new EsError(status, { type, reason, ...extra });
}

/** A feature real Elasticsearch has and the fake does not emulate: loud, so gaps are visible. */
export function unsupported(what: string): never {
  fail(400, 'fake_unsupported_exception', `the fake Elasticsearch does not emulate ${what}`);
}

export function indexNotFoundCause(name: string, reason = `no such index [${name}]`): Cause {
  return {
    type: 'index_not_found_exception',
    reason,
    'resource.type': 'index_or_alias',
    'resource.id': name,
    index_uuid: '_na_',
    index: name,
  };
}

export function indexNotFound(name: string): never {
  throw new EsError(404, indexNotFoundCause(name));
}

/** `Validation Failed: 1: a;2: b;` */
export function validationFailed(messages: string[]): never {
  fail(400, 'action_request_validation_exception', `Validation Failed: ${messages.map((m, i) => `${i + 1}: ${m};`).join('')}`);
}

const globCache = new Map<string, RegExp>();

/** Elasticsearch's simple wildcard match (`*` only). */
export function globMatch(pattern: string, s: string): boolean {
  if (!pattern.includes('*')) return pattern === s;
  let re = globCache.get(pattern);
  if (!re) {
    re = new RegExp(`^${pattern.split('*').map(escapeRe).join('.*')}$`, 's');
    globCache.set(pattern, re);
  }
  return re.test(s);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** True when some string matches both wildcard patterns (used for index template overlap checks). */
export function globsIntersect(a: string, b: string): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    memo.set(key, false);
    let r: boolean;
    if (i === a.length && j === b.length) r = true;
    else if (a[i] === '*') r = go(i + 1, j) || (j < b.length && go(i, j + 1));
    else if (b[j] === '*') r = go(i, j + 1) || (i < a.length && go(i + 1, j));
    else r = i < a.length && j < b.length && a[i] === b[j] && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

export function clone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

/** Recursive merge of plain objects (arrays and scalars of `over` replace), as settings and `update` docs merge. */
export function deepMerge(base: Obj, over: Obj): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const prev = out[k];
    out[k] = isObj(prev) && isObj(v) ? deepMerge(prev, v) : clone(v);
  }
  return out;
}

/** `a,b` or `['a','b']` → `['a','b']`. */
export function list(v: unknown): string[] {
  if (v === undefined || v === null || v === '') return [];
  if (Array.isArray(v)) return v.flatMap((x) => list(x));
  return String(v)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Lucene orders terms by their UTF-8 bytes, i.e. by code point (not by UTF-16 unit). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i) ?? 0;
    const y = b.codePointAt(i) ?? 0;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

export function truthyParam(v: unknown): boolean {
  return v === true || v === 'true' || v === '';
}

export function randomId(length = 20): string {
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let s = '';
  for (let i = 0; i < length; i++) s += abc[Math.floor(Math.random() * abc.length)];
  return s;
}

/**
 * `_source` filtering (`includes` / `excludes` with wildcards on dotted paths), as
 * `_source: {includes, excludes}`, `_source_includes` and `_source_excludes` do it.
 */
export function filterSource(source: Obj, includes: readonly string[], excludes: readonly string[]): Obj {
  if (includes.length === 0 && excludes.length === 0) return source;
  const excluded = (p: string): boolean => excludes.some((e) => globMatch(e, p) || globMatch(`${e}.*`, p));
  const included = (p: string): boolean => includes.length === 0 || includes.some((i) => globMatch(i, p) || globMatch(`${i}.*`, p));
  const mayIncludeBelow = (p: string): boolean =>
    includes.some((i) => {
      const prefix = i.split('*')[0] ?? '';
      return prefix.startsWith(`${p}.`) || `${p}.`.startsWith(prefix);
    });
  const walk = (o: Obj, path: string): Obj => {
    const out: Obj = {};
    for (const [k, v] of Object.entries(o)) {
      const p = path ? `${path}.${k}` : k;
      if (excluded(p)) continue;
      if (included(p)) {
        out[k] = walkValue(v, p, true);
      } else if (mayIncludeBelow(p) && (isObj(v) || Array.isArray(v))) {
        const f = walkValue(v, p, false);
        if ((isObj(f) && Object.keys(f).length > 0) || (Array.isArray(f) && f.length > 0)) out[k] = f;
      }
    }
    return out;
  };
  const walkValue = (v: unknown, p: string, whole: boolean): unknown => {
    if (isObj(v)) return walk(v, p);
    if (Array.isArray(v)) {
      const items = v.map((x) => (isObj(x) || Array.isArray(x) ? walkValue(x, p, whole) : x));
      return whole ? items : items.filter((x) => isObj(x) && Object.keys(x).length > 0);
    }
    return v;
  };
  return walk(source, '');
}
