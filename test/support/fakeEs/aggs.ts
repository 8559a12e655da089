/** Terms aggregations of the fake, computed per index (shard) with shard_size, then merged. */
import type { IndexState } from './cluster.js';
import { lookupDef, type Val } from './mapping.js';
import { clauses, cmpVal, parsing, perShard, queryTerm, type Failure } from './query.js';
import { kindOfType, sortKind, type Hit } from './sort.js';
import { fail, isObj, unsupported, type Obj } from './util.js';

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
  if (!isObj(aggs)) parsing('Expected [START_OBJECT] under [aggs]');
  const out: Obj = {};
  for (const [name, a] of Object.entries(aggs)) {
    if (!isObj(a)) parsing(`Expected [START_OBJECT] under [${name}]`);
    const types = Object.keys(a).filter((k) => k !== 'meta');
    if (types.includes('aggs') || types.includes('aggregations')) unsupported('sub-aggregations');
    if (types.length !== 1) parsing(`Expected exactly one aggregation type in [${name}]`);
    if (types[0] !== 'terms') unsupported(`[${types[0]}] aggregations`);
    const t = a.terms;
    if (!isObj(t) || typeof t.field !== 'string') unsupported('terms aggregations without a field');
    for (const k of Object.keys(t))
      if (
        ![
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
        ].includes(k)
      )
        unsupported(`terms aggregation option [${k}]`);
    const field = t.field;
    const size = Number(t.size ?? 10);
    if (!(size > 0)) fail(400, 'illegal_argument_exception', `[size] must be greater than 0. Found [${size}] in [${name}]`);
    const shardSize = Math.max(size, Number(t.shard_size ?? Math.floor(size * 1.5 + 10)));
    const minCount = Number(t.min_doc_count ?? 1);
    const order = parseOrder(t.order);
    if (!order.some((o) => o.by === '_key')) order.push({ by: '_key', desc: false });
    const byOrder = (x: [Val, number], y: [Val, number]): number => {
      for (const o of order) {
        const c = o.by === '_count' ? x[1] - y[1] : cmpVal(x[0], y[0]);
        if (c !== 0) return o.desc ? -c : c;
      }
      return 0;
    };
    const merged = new Map<Val, number>();
    let totalValues = 0;
    let typeName = 'sterms';
    let keyType = '';
    const perIndex = perShard(indices, failures, (idx) => {
      const def = lookupDef(idx.defs, field);
      if (!def) return [] as [Val, number][];
      sortKind(idx, { field, desc: false, missing: '_last' });
      keyType = def.type;
      typeName = kindOfType(def.type) === 'string' ? 'sterms' : def.type === 'double' || def.type === 'float' ? 'dterms' : 'lterms';
      const counts = new Map<Val, number>();
      for (const h of hits) {
        if (h.idx !== idx) continue;
        const vals = new Set(h.d.fields.get(field) ?? []);
        if (vals.size === 0 && t.missing !== undefined) vals.add(queryTerm(idx, def, t.missing));
        for (const v of vals) counts.set(v, (counts.get(v) ?? 0) + 1);
      }
      return [...counts.entries()].sort(byOrder);
    });
    for (const entries of perIndex.values()) {
      for (const [, c] of entries) totalValues += c;
      for (const [k, c] of entries.slice(0, shardSize)) merged.set(k, (merged.get(k) ?? 0) + c);
    }
    const buckets = [...merged.entries()]
      .filter(([, c]) => c >= minCount)
      .sort(byOrder)
      .slice(0, size);
    const returned = buckets.reduce((s, [, c]) => s + c, 0);
    out[typedKeys ? `${typeName}#${name}` : name] = {
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: totalValues - returned,
      buckets: buckets.map(([key, doc_count]) => {
        const b: Obj = { key: typeof key === 'boolean' ? (key ? 1 : 0) : key };
        if (keyType === 'date') b.key_as_string = new Date(Number(key)).toISOString();
        if (keyType === 'boolean') b.key_as_string = String(key);
        b.doc_count = doc_count;
        return b;
      }),
    };
  }
  return out;
}
