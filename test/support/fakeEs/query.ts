/** The query DSL subset of the fake, evaluated against what each index's mapping indexed (not `_source`). */
import type { DocRecord, IndexState } from './cluster.js';
import { NUMERIC, indexSetting, lookupDef, type FieldDef, type IndexedDoc, type Val } from './mapping.js';
import { EsError, compareStrings, fail, isObj, list, unsupported, type Cause, type Obj } from './util.js';
import { isCause, leafValue, parseDate, textTokens } from './values.js';

/** A failure on one shard (= one index here); the search fails as a whole only if every shard fails. */
export class ShardFailure extends Error {
  constructor(
    readonly status: number,
    readonly esCause: Cause,
  ) {
    super(esCause.reason);
  }
}

export type Matcher = (d: IndexedDoc, rec: DocRecord) => number | null;

export function parsing(reason: string): never {
  fail(400, 'parsing_exception', reason, { line: 1, col: 1 });
}

export function shardFail(idx: IndexState, type: string, reason: string, extra: Obj = {}): never {
  throw new ShardFailure(400, { type, reason, index_uuid: idx.uuid, index: idx.name, ...extra });
}

export function clauses(x: unknown): unknown[] {
  return x === undefined ? [] : Array.isArray(x) ? x : [x];
}

/** `{field: value}` or `{field: {value, ...}}` of term-level queries. */
function fieldSpec(kind: string, spec: unknown, valueKey: string): { field: string; value: unknown; opts: Obj } {
  if (!isObj(spec)) parsing(`[${kind}] query malformed, no start_object after query name`);
  const entries = Object.entries(spec).filter(([k]) => k !== 'boost' && k !== '_name');
  if (entries.length !== 1) parsing(`[${kind}] query doesn't support multiple fields, found [${entries.map(([k]) => k).join('] and [')}]`);
  const [field, v] = entries[0] as [string, unknown];
  return isObj(v) ? { field, value: v[valueKey], opts: v } : { field, value: v, opts: {} };
}

/** A query value converted as the field's mapper does (normalizer, numbers, dates...). */
export function queryTerm(idx: IndexState, def: FieldDef, v: unknown, format?: unknown): Val {
  if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
    parsing(`[term] query does not support values of type [${typeof v}]`);
  if (def.type === 'keyword') return def.normalize ? def.normalize(String(v)) : String(v);
  if (def.type === 'flattened' || def.type === 'text' || def.type === 'match_only_text') return String(v);
  if (def.type === 'date' && typeof v === 'string' && v.startsWith('now')) unsupported('date math');
  // as Elasticsearch does: a JSON number is epoch milliseconds unless the query names a format;
  // only a string is read with the field's own format (checked against a real 8.19 node)
  const dateFormat = format ?? (typeof v === 'number' ? 'epoch_millis' : def.m.format);
  const r = def.type === 'date' ? parseDate(v, dateFormat) : leafValue(def.type, { coerce: true }, v);
  if (isCause(r)) shardFail(idx, 'query_shard_exception', `failed to create query: ${r.reason}`, { caused_by: r });
  if (NUMERIC.has(def.type) && def.type !== 'double' && def.type !== 'float' && Number(v) !== Math.trunc(Number(v))) return NaN;
  if (!NUMERIC.has(def.type) && !['date', 'ip', 'boolean'].includes(def.type)) unsupported(`term queries on [${def.type}] fields`);
  return r;
}

export function cmpVal(a: Val, b: Val): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  return Number(a) < Number(b) ? -1 : Number(a) > Number(b) ? 1 : 0;
}

function hasField(d: IndexedDoc, field: string): boolean {
  if (d.fields.has(field)) return true;
  const prefix = `${field}.`;
  for (const k of d.fields.keys()) if (k.startsWith(prefix)) return true;
  return false;
}

function termsMatcher(idx: IndexState, field: string, values: unknown[], boost: number): Matcher {
  if (field === '_id') {
    const ids = new Set(values.map(String));
    return (_d, rec) => (ids.has(rec.id) ? boost : null);
  }
  if (field === '_index') return () => (values.some((v) => String(v) === idx.name) ? boost : null);
  const def = lookupDef(idx.defs, field);
  if (!def) return () => null;
  const terms = new Set(values.map((v) => queryTerm(idx, def, v)));
  return (d) => (d.fields.get(field)?.some((x) => terms.has(x)) ? boost : null);
}

const UNEMULATED = [
  'wildcard',
  'regexp',
  'fuzzy',
  'query_string',
  'simple_query_string',
  'match_phrase',
  'multi_match',
  'function_score',
  'script',
  'geo_distance',
  'knn',
];

export function compileQuery(q: unknown, idx: IndexState): Matcher {
  if (!isObj(q)) parsing('[_na] query malformed, must start with start_object');
  const keys = Object.keys(q);
  if (keys.length !== 1)
    parsing(
      keys.length === 0
        ? 'query malformed, empty clause found'
        : `[${keys[0]}] malformed query, expected [END_OBJECT] but found [FIELD_NAME]`,
    );
  const type = keys[0] as string;
  const spec = q[type];
  const boost = isObj(spec) && typeof spec.boost === 'number' ? spec.boost : 1;
  switch (type) {
    case 'match_all':
      return () => boost;
    case 'match_none':
      return () => null;
    case 'term': {
      const { field, value, opts } = fieldSpec(type, spec, 'value');
      if (opts.case_insensitive === true) unsupported('case_insensitive term queries');
      return termsMatcher(idx, field, [value], typeof opts.boost === 'number' ? opts.boost : boost);
    }
    case 'terms': {
      const { field, value } = fieldSpec(type, spec, '__lookup__');
      if (!Array.isArray(value)) {
        if (isObj(value)) unsupported('terms lookup');
        parsing(`[terms] query does not support [${field}]`);
      }
      const max = Number(indexSetting(idx.settings, 'max_terms_count') ?? 65536);
      if (value.length > max) {
        shardFail(
          idx,
          'illegal_argument_exception',
          `The number of terms [${value.length}] used in the Terms Query request has exceeded the allowed maximum of [${max}]. This maximum can be set by changing the [index.max_terms_count] index level setting.`,
        );
      }
      return termsMatcher(idx, field, value, boost);
    }
    case 'ids': {
      if (!isObj(spec)) parsing('[ids] query malformed');
      const ids = new Set(list(spec.values));
      return (_d, rec) => (ids.has(rec.id) ? boost : null);
    }
    case 'exists': {
      if (!isObj(spec) || typeof spec.field !== 'string') parsing('[exists] must be provided with a [field]');
      const field = spec.field;
      if (field === '_id' || field === '_index' || field === '_source') return () => boost;
      return (d) => (hasField(d, field) ? boost : null);
    }
    case 'bool': {
      if (!isObj(spec)) parsing('[bool] query malformed');
      for (const k of Object.keys(spec)) {
        if (!['must', 'filter', 'should', 'must_not', 'minimum_should_match', 'boost', '_name', 'adjust_pure_negative'].includes(k))
          parsing(`[bool] query does not support [${k}]`);
      }
      const must = clauses(spec.must).map((c) => compileQuery(c, idx));
      const filter = clauses(spec.filter).map((c) => compileQuery(c, idx));
      const should = clauses(spec.should).map((c) => compileQuery(c, idx));
      const mustNot = clauses(spec.must_not).map((c) => compileQuery(c, idx));
      const msmRaw = spec.minimum_should_match;
      const msm =
        msmRaw === undefined
          ? must.length + filter.length === 0 && should.length > 0
            ? 1
            : 0
          : String(msmRaw).endsWith('%')
            ? Math.floor((should.length * parseInt(String(msmRaw), 10)) / 100)
            : Number(msmRaw) < 0
              ? should.length + Number(msmRaw)
              : Number(msmRaw);
      return (d, rec) => {
        let score = 0;
        for (const m of must) {
          const s = m(d, rec);
          if (s === null) return null;
          score += s;
        }
        for (const f of filter) if (f(d, rec) === null) return null;
        for (const n of mustNot) if (n(d, rec) !== null) return null;
        let matched = 0;
        for (const s of should) {
          const r = s(d, rec);
          if (r !== null) {
            matched++;
            score += r;
          }
        }
        return matched < msm ? null : score * boost;
      };
    }
    case 'constant_score': {
      if (!isObj(spec) || spec.filter === undefined) parsing("[constant_score] requires a 'filter' element");
      const inner = compileQuery(spec.filter, idx);
      return (d, rec) => (inner(d, rec) === null ? null : boost);
    }
    case 'range': {
      const { field, opts } = fieldSpec(type, spec, '__none__');
      const def = lookupDef(idx.defs, field);
      if (!def) return () => null;
      const bound = (k: string): Val | undefined =>
        opts[k] === undefined || opts[k] === null ? undefined : queryTerm(idx, def, opts[k], opts.format);
      const [gte, gt, lte, lt] = [bound('gte'), bound('gt'), bound('lte'), bound('lt')];
      const ok = (x: Val): boolean =>
        (gte === undefined || cmpVal(x, gte) >= 0) &&
        (gt === undefined || cmpVal(x, gt) > 0) &&
        (lte === undefined || cmpVal(x, lte) <= 0) &&
        (lt === undefined || cmpVal(x, lt) < 0);
      return (d) => (d.fields.get(field)?.some(ok) ? boost : null);
    }
    case 'prefix': {
      const { field, value } = fieldSpec(type, spec, 'value');
      const def = lookupDef(idx.defs, field);
      if (!def) return () => null;
      const p = String(queryTerm(idx, def, value));
      return (d) => (d.fields.get(field)?.some((x) => typeof x === 'string' && x.startsWith(p)) ? boost : null);
    }
    case 'match': {
      const { field, value, opts } = fieldSpec(type, spec, 'query');
      const def = lookupDef(idx.defs, field);
      if (!def) return () => null;
      if (def.type !== 'text' && def.type !== 'match_only_text') return termsMatcher(idx, field, [value], boost);
      const tokens = textTokens(String(value));
      const all = String(opts.operator ?? 'or').toLowerCase() === 'and';
      return (d) => {
        const vals = d.fields.get(field) ?? [];
        const hit = (t: string): boolean => vals.includes(t);
        return tokens.length > 0 && (all ? tokens.every(hit) : tokens.some(hit)) ? boost : null;
      };
    }
    case 'nested': {
      if (!isObj(spec) || typeof spec.path !== 'string') parsing("[nested] requires 'path' field");
      const path = spec.path;
      if (idx.defs.get(path)?.type !== 'nested') {
        if (spec.ignore_unmapped === true) return () => null;
        shardFail(idx, 'query_shard_exception', `[nested] failed to find nested object under path [${path}]`);
      }
      const inner = compileQuery(spec.query, idx);
      return (d, rec) => ((d.nested.get(path) ?? []).some((sub) => inner(sub, rec) !== null) ? boost : null);
    }
    default:
      if (UNEMULATED.includes(type)) unsupported(`[${type}] queries`);
      parsing(`unknown query [${type}]`);
  }
}

// ---- shard failures ---------------------------------------------------------------------------

export interface Failure {
  idx: IndexState;
  status: number;
  cause: Cause;
}

/** Runs `fn` on every target index, collecting per-index failures as real shard failures. */
export function perShard<T>(indices: IndexState[], failures: Failure[], fn: (idx: IndexState) => T): Map<IndexState, T> {
  const out = new Map<IndexState, T>();
  for (const idx of indices) {
    if (failures.some((f) => f.idx === idx)) continue;
    try {
      out.set(idx, fn(idx));
    } catch (err) {
      if (!(err instanceof ShardFailure)) throw err;
      failures.push({ idx, status: err.status, cause: err.esCause });
    }
  }
  return out;
}

export function phaseFailure(failures: Failure[], reason: string): EsError {
  const first = failures[0] as Failure;
  const body = {
    error: {
      root_cause: failures.map((f) => {
        const c: Obj = { ...f.cause };
        delete c.caused_by;
        return c;
      }),
      type: 'search_phase_execution_exception',
      reason,
      phase: 'query',
      grouped: true,
      failed_shards: failures.map((f) => ({ shard: 0, index: f.idx.name, node: 'fake-node-0', reason: f.cause })),
      caused_by: first.cause,
    },
    status: first.status,
  };
  return new EsError(first.status, { type: 'search_phase_execution_exception', reason }, body);
}
