/**
 * Aggregations of the fake: `terms` (computed per index, i.e. per shard, with shard_size, then
 * merged), `filters`, and the metrics `cardinality`, `min` and `max`, with sub-aggregations under
 * bucket aggregations. A bucket's sub-aggregations see the documents of the shards that returned
 * the bucket, as Elasticsearch's reduce does. `cardinality` is exact here; Elasticsearch is exact
 * only up to its `precision_threshold` (HyperLogLog++ above it).
 */
import type { IndexState } from './cluster.js';
import { NUMERIC, lookupDef, type Val } from './mapping.js';
import { clauses, cmpVal, compileQuery, parsing, perShard, queryTerm, type Failure } from './query.js';
import { kindOfType, sortKind, type Hit } from './sort.js';
import { fail, isObj, unsupported, type Obj } from './util.js';

interface Ctx {
  indices: IndexState[];
  failures: Failure[];
  typedKeys: boolean;
}

const TERMS_OPTIONS = [
  'field',
  'size',
  'shard_size',
  'order',
  'min_doc_count',
  'shard_min_doc_count',
  'missing',
  'execution_hint',
  'collect_mode',
  'show_term_doc_count_error',
];

function parseOrder(order: unknown): { by: '_count' | '_key'; desc: boolean }[] {
  if (order === undefined) return [{ by: '_count', desc: true }];
  return clauses(order).map((o) => {
    if (!isObj(o) || Object.keys(o).length !== 1) parsing('[order] malformed');
    const [by, dir] = Object.entries(o)[0] as [string, unknown];
    const key = by === '_term' ? '_key' : by;
    if (key !== '_count' && key !== '_key') unsupported(`terms aggregation order by [${by}]`);
    return { by: key, desc: String(dir) === 'desc' };
  });
}

export function aggregate(aggs: unknown, indices: IndexState[], hits: Hit[], failures: Failure[], typedKeys: boolean): Obj {
  return level(aggs, { indices, failures, typedKeys }, hits);
}

/** One level of named aggregations over `hits`. */
function level(aggs: unknown, ctx: Ctx, hits: Hit[]): Obj {
  if (!isObj(aggs)) parsing('Expected [START_OBJECT] under [aggs]');
  const out: Obj = {};
  for (const [name, a] of Object.entries(aggs)) {
    if (!isObj(a)) parsing(`Expected [START_OBJECT] under [${name}]`);
    const sub = a.aggs ?? a.aggregations;
    const types = Object.keys(a).filter((k) => k !== 'meta' && k !== 'aggs' && k !== 'aggregations');
    if (types.length !== 1) parsing(`Expected exactly one aggregation type in [${name}]`);
    const type = types[0] as string;
    const spec = a[type];
    let typed: string;
    let result: Obj;
    switch (type) {
      case 'terms':
        ({ typed, result } = terms(name, spec, ctx, hits, sub));
        break;
      case 'filters':
        ({ typed, result } = filters(name, spec, ctx, hits, sub));
        break;
      case 'cardinality':
      case 'min':
      case 'max':
        if (sub !== undefined) {
          fail(400, 'aggregation_initialization_exception', `Aggregator [${name}] of type [${type}] cannot accept sub-aggregations`);
        }
        ({ typed, result } = type === 'cardinality' ? cardinality(name, spec, ctx, hits) : minMax(type, name, spec, ctx, hits));
        break;
      default:
        unsupported(`[${type}] aggregations`);
    }
    out[ctx.typedKeys ? `${typed}#${name}` : name] = result;
  }
  return out;
}

/** The sub-aggregations of one bucket, merged into it. */
function withSub(bucket: Obj, sub: unknown, ctx: Ctx, hits: Hit[]): Obj {
  return sub === undefined ? bucket : { ...bucket, ...level(sub, ctx, hits) };
}

function terms(name: string, t: unknown, ctx: Ctx, hits: Hit[], sub: unknown): { typed: string; result: Obj } {
  if (!isObj(t) || typeof t.field !== 'string') unsupported('terms aggregations without a field');
  for (const k of Object.keys(t)) if (!TERMS_OPTIONS.includes(k)) unsupported(`terms aggregation option [${k}]`);
  const field = t.field;
  const size = Number(t.size ?? 10);
  if (!(size > 0)) fail(400, 'illegal_argument_exception', `[size] must be greater than 0. Found [${size}] in [${name}]`);
  const shardSize = Math.max(size, Number(t.shard_size ?? Math.floor(size * 1.5 + 10)));
  const minCount = Number(t.min_doc_count ?? 1);
  const order = parseOrder(t.order);
  if (!order.some((o) => o.by === '_key')) order.push({ by: '_key', desc: false });
  const byOrder = (x: [Val, Hit[]], y: [Val, Hit[]]): number => {
    for (const o of order) {
      const c = o.by === '_count' ? x[1].length - y[1].length : cmpVal(x[0], y[0]);
      if (c !== 0) return o.desc ? -c : c;
    }
    return 0;
  };
  let typeName = 'sterms';
  let keyType = '';
  const perIndex = perShard(ctx.indices, ctx.failures, (idx) => {
    const def = lookupDef(idx.defs, field);
    if (!def) return [] as [Val, Hit[]][];
    sortKind(idx, { field, desc: false, missing: '_last' });
    keyType = def.type;
    typeName = kindOfType(def.type) === 'string' ? 'sterms' : def.type === 'double' || def.type === 'float' ? 'dterms' : 'lterms';
    const byKey = new Map<Val, Hit[]>();
    for (const h of hits) {
      if (h.idx !== idx) continue;
      const vals = new Set(h.d.fields.get(field) ?? []);
      if (vals.size === 0 && t.missing !== undefined) vals.add(queryTerm(idx, def, t.missing));
      for (const v of vals) {
        const list = byKey.get(v);
        if (list) list.push(h);
        else byKey.set(v, [h]);
      }
    }
    return [...byKey.entries()].sort(byOrder);
  });
  const merged = new Map<Val, Hit[]>();
  let totalValues = 0;
  for (const entries of perIndex.values()) {
    for (const [, hs] of entries) totalValues += hs.length;
    for (const [k, hs] of entries.slice(0, shardSize)) merged.set(k, [...(merged.get(k) ?? []), ...hs]);
  }
  const top = [...merged.entries()]
    .filter(([, hs]) => hs.length >= minCount)
    .sort(byOrder)
    .slice(0, size);
  const returned = top.reduce((s, [, hs]) => s + hs.length, 0);
  return {
    typed: typeName,
    result: {
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: totalValues - returned,
      buckets: top.map(([key, hs]) => {
        const b: Obj = { key: typeof key === 'boolean' ? (key ? 1 : 0) : key };
        if (keyType === 'date') b.key_as_string = new Date(Number(key)).toISOString();
        if (keyType === 'boolean') b.key_as_string = String(key);
        b.doc_count = hs.length;
        return withSub(b, sub, ctx, hs);
      }),
    },
  };
}

function filters(name: string, f: unknown, ctx: Ctx, hits: Hit[], sub: unknown): { typed: string; result: Obj } {
  if (!isObj(f) || f.filters === undefined) parsing(`[filters] aggregation [${name}] needs [filters]`);
  for (const k of Object.keys(f)) if (k !== 'filters') unsupported(`filters aggregation option [${k}]`);
  const keyed = isObj(f.filters);
  if (!keyed && !Array.isArray(f.filters)) parsing(`[filters] of [${name}] must be an object or an array`);
  const entries: [string, unknown][] = keyed ? Object.entries(f.filters as Obj) : (f.filters as unknown[]).map((q, i) => [String(i), q]);
  const buckets = entries.map(([key, q]) => {
    const compiled = perShard(ctx.indices, ctx.failures, (idx) => compileQuery(q, idx));
    const matched = hits.filter((h) => {
      const m = compiled.get(h.idx);
      return m !== undefined && m(h.d, h.rec) !== null;
    });
    return [key, withSub({ doc_count: matched.length }, sub, ctx, matched)] as const;
  });
  // keyed filters come back sorted by key, as Elasticsearch returns them
  return {
    typed: 'filters',
    result: {
      buckets: keyed ? Object.fromEntries([...buckets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : buckets.map(([, b]) => b),
    },
  };
}

function metricField(type: string, name: string, spec: unknown, allowed: readonly string[]): string {
  if (!isObj(spec) || typeof spec.field !== 'string') unsupported(`[${type}] aggregations without a field`);
  for (const k of Object.keys(spec)) if (!allowed.includes(k)) unsupported(`${type} aggregation option [${k}] in [${name}]`);
  return spec.field;
}

function cardinality(name: string, spec: unknown, ctx: Ctx, hits: Hit[]): { typed: string; result: Obj } {
  const field = metricField('cardinality', name, spec, ['field', 'precision_threshold']);
  const threshold = (spec as Obj).precision_threshold;
  if (threshold !== undefined && !(Number(threshold) >= 0)) fail(400, 'illegal_argument_exception', `[precision_threshold] must be >= 0`);
  const seen = new Set<Val>();
  perShard(ctx.indices, ctx.failures, (idx) => {
    if (!lookupDef(idx.defs, field)) return;
    for (const h of hits) if (h.idx === idx) for (const v of h.d.fields.get(field) ?? []) seen.add(v);
  });
  return { typed: 'cardinality', result: { value: seen.size } };
}

function minMax(type: 'min' | 'max', name: string, spec: unknown, ctx: Ctx, hits: Hit[]): { typed: string; result: Obj } {
  const field = metricField(type, name, spec, ['field']);
  let best: number | null = null;
  let format: unknown;
  perShard(ctx.indices, ctx.failures, (idx) => {
    const def = lookupDef(idx.defs, field);
    if (!def) return;
    if (!NUMERIC.has(def.type) && def.type !== 'date' && def.type !== 'boolean') {
      fail(400, 'illegal_argument_exception', `Field [${field}] of type [${def.type}] is not supported for aggregation [${type}]`);
    }
    if (def.type === 'date') format = def.m.format ?? 'strict_date_optional_time||epoch_millis';
    for (const h of hits) {
      if (h.idx !== idx) continue;
      for (const v of h.d.fields.get(field) ?? []) {
        const n = typeof v === 'boolean' ? (v ? 1 : 0) : Number(v);
        if (best === null || (type === 'min' ? n < best : n > best)) best = n;
      }
    }
  });
  const result: Obj = { value: best };
  if (best !== null && format !== undefined) {
    // formatted with the field's first format, as Elasticsearch does
    const first = String(format).split('||')[0];
    const ms = best as number;
    result.value_as_string =
      first === 'epoch_second' ? String(ms / 1000) : first === 'epoch_millis' ? String(ms) : new Date(ms).toISOString();
  }
  return { typed: type, result };
}
