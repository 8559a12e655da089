/** Sorting as Elasticsearch does it: doc values, min/max modes, missing values, unmapped fields. */
import type { DocRecord, IndexState } from './cluster.js';
import { NUMERIC, lookupDef, type FieldDef, type IndexedDoc } from './mapping.js';
import { clauses, parsing, shardFail } from './query.js';
import { compareStrings, isObj, unsupported } from './util.js';

/** Long.MAX_VALUE / MIN_VALUE, the sort values of missing numbers (2^63 - 1 is not a double: JSON round trips give 2^63 too). */
const MAX_LONG = 2 ** 63;
const MIN_LONG = -(2 ** 63);

export interface Hit {
  idx: IndexState;
  rec: DocRecord;
  d: IndexedDoc;
  score: number;
  /** Global position (index order, then document order): the final tie-break. */
  order: number;
  keys?: SortKey[];
}

export interface SortSpec {
  field: string;
  desc: boolean;
  missing: unknown;
  unmappedType?: string;
  mode?: string;
}

export type SortKind = 'score' | 'doc' | 'string' | 'number';
export type SortKey = string | number | null;

export function parseSort(sort: unknown): SortSpec[] {
  const items = typeof sort === 'string' ? sort.split(',') : clauses(sort);
  return items.map((item): SortSpec => {
    if (typeof item === 'string') {
      const [field, order] = item.split(':') as [string, string | undefined];
      return { field, desc: order ? order === 'desc' : field === '_score', missing: '_last' };
    }
    if (!isObj(item) || Object.keys(item).length !== 1) parsing('[sort] malformed: expected a field name or {field: order}');
    const [field, v] = Object.entries(item)[0] as [string, unknown];
    const o = isObj(v) ? v : { order: v };
    if (o.nested !== undefined || o.script !== undefined || field === '_script' || field === '_geo_distance')
      unsupported('nested, script and geo sorts');
    const order = o.order === undefined ? (field === '_score' ? 'desc' : 'asc') : String(o.order);
    if (order !== 'asc' && order !== 'desc') parsing(`[sort] unknown order [${order}]`);
    return {
      field,
      desc: order === 'desc',
      missing: o.missing ?? '_last',
      ...(o.unmapped_type !== undefined ? { unmappedType: String(o.unmapped_type) } : {}),
      ...(o.mode !== undefined ? { mode: String(o.mode) } : {}),
    };
  });
}

export function kindOfType(type: string): SortKind {
  return NUMERIC.has(type) || type === 'date' || type === 'boolean' ? 'number' : 'string';
}

/** How `spec` sorts on `idx`, or the shard failure a real cluster reports. */
export function sortKind(idx: IndexState, spec: SortSpec): { kind: SortKind; def?: FieldDef } {
  const f = spec.field;
  if (f === '_score') return { kind: 'score' };
  if (f === '_doc' || f === '_shard_doc') return { kind: 'doc' };
  if (f === '_id') {
    shardFail(
      idx,
      'illegal_argument_exception',
      'Fielddata access on the _id field is disallowed, you can re-enable it by updating the dynamic cluster setting: indices.id_field_data.enabled',
    );
  }
  if (f === '_index') return { kind: 'string' };
  const def = lookupDef(idx.defs, f);
  if (!def) {
    if (spec.unmappedType) return { kind: kindOfType(spec.unmappedType) };
    shardFail(idx, 'query_shard_exception', `No mapping found for [${f}] in order to sort on`);
  }
  if ((def.type === 'text' || def.type === 'match_only_text') && def.m.fielddata !== true) {
    shardFail(
      idx,
      'illegal_argument_exception',
      `Fielddata is disabled on [${f}] in [${idx.name}]. Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [${f}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
    );
  }
  if (def.m.doc_values === false) {
    shardFail(
      idx,
      'illegal_argument_exception',
      `Can't load fielddata on [${f}] because fielddata is unsupported on fields of type [${def.type}]. Use doc values instead.`,
    );
  }
  return { kind: kindOfType(def.type), def };
}

export function sortKey(spec: SortSpec, kind: SortKind, def: FieldDef | undefined, idx: IndexState, hit: Hit): SortKey {
  if (kind === 'score') return hit.score;
  if (kind === 'doc') return hit.order;
  if (spec.field === '_index') return idx.name;
  const raw = def ? (hit.d.fields.get(spec.field) ?? []) : [];
  if (kind === 'number') {
    const nums = raw.map((x) => (typeof x === 'boolean' ? (x ? 1 : 0) : Number(x)));
    if (nums.length === 0) {
      if (spec.missing === '_last') return spec.desc ? MIN_LONG : MAX_LONG;
      if (spec.missing === '_first') return spec.desc ? MAX_LONG : MIN_LONG;
      return Number(spec.missing);
    }
    const mode = spec.mode ?? (spec.desc ? 'max' : 'min');
    if (mode === 'sum') return nums.reduce((a, b) => a + b, 0);
    if (mode === 'avg') return nums.reduce((a, b) => a + b, 0) / nums.length;
    return mode === 'max' ? Math.max(...nums) : Math.min(...nums);
  }
  const strs = raw.map(String).sort(compareStrings);
  if (strs.length === 0) return spec.missing === '_last' || spec.missing === '_first' ? null : String(spec.missing);
  const mode = spec.mode ?? (spec.desc ? 'max' : 'min');
  return (mode === 'max' ? strs[strs.length - 1] : strs[0]) as string;
}

export function compareKeys(a: SortKey, b: SortKey, spec: SortSpec): number {
  if (a === null || b === null) {
    if (a === b) return 0;
    const missingFirst = spec.missing === '_first';
    return (a === null) === missingFirst ? -1 : 1;
  }
  const c = typeof a === 'string' && typeof b === 'string' ? compareStrings(a, b) : a < b ? -1 : a > b ? 1 : 0;
  return spec.desc ? -c : c;
}
