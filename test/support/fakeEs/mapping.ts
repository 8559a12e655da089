/**
 * Mappings and settings of the fake: normalization, template composition, additive updates with
 * the real conflict rules, and the parsing of a document into the values each mapped field
 * indexes (which is what queries, sorts and aggregations see; `_source` is kept verbatim).
 */
import { EsError, clone, deepEqual, fail, isObj, type Obj } from './util.js';

export type Val = string | number | boolean;

/** What a document indexes: values per dotted field path, and its nested sub-documents. */
export interface IndexedDoc {
  fields: Map<string, Val[]>;
  nested: Map<string, IndexedDoc[]>;
}

export interface FieldDef {
  path: string;
  type: string;
  m: Obj;
  normalize?: (s: string) => string;
  /** Closest enclosing `nested` path: such fields are only reachable through a `nested` query. */
  nestedPath?: string;
}

export const NUMERIC = new Set(['long', 'integer', 'short', 'byte', 'unsigned_long', 'double', 'float', 'half_float', 'scaled_float']);
const COMMON = ['type', 'index', 'doc_values', 'store', 'meta', 'fields', 'copy_to', 'null_value', 'script', 'on_script_error'];
const PARAMS: Record<string, string[]> = {
  keyword: [
    ...COMMON,
    'ignore_above',
    'normalizer',
    'split_queries_on_whitespace',
    'eager_global_ordinals',
    'index_options',
    'norms',
    'similarity',
    'time_series_dimension',
  ],
  text: [
    ...COMMON,
    'analyzer',
    'search_analyzer',
    'search_quote_analyzer',
    'index_options',
    'index_phrases',
    'index_prefixes',
    'norms',
    'position_increment_gap',
    'similarity',
    'term_vector',
    'fielddata',
    'fielddata_frequency_filter',
    'eager_global_ordinals',
  ],
  numeric: [...COMMON, 'coerce', 'ignore_malformed', 'time_series_dimension', 'time_series_metric', 'scaling_factor'],
  date: [...COMMON, 'format', 'locale', 'ignore_malformed', 'print_format'],
  ip: [...COMMON, 'ignore_malformed', 'time_series_dimension'],
  boolean: [...COMMON, 'ignore_malformed', 'time_series_dimension'],
  flattened: [
    'type',
    'depth_limit',
    'doc_values',
    'eager_global_ordinals',
    'ignore_above',
    'index',
    'index_options',
    'null_value',
    'similarity',
    'split_queries_on_whitespace',
    'meta',
    'time_series_dimensions',
  ],
  object: ['type', 'properties', 'dynamic', 'enabled', 'subobjects'],
  nested: ['type', 'properties', 'dynamic', 'include_in_parent', 'include_in_root'],
};
/** Accepted without indexing anything: queries on them match nothing in the fake. */
const OTHER_TYPES = new Set([
  'binary', 'geo_point', 'geo_shape', 'wildcard', 'constant_keyword', 'match_only_text', 'version', 'dense_vector', 'sparse_vector',
  'search_as_you_type', 'token_count', 'histogram', 'rank_feature', 'rank_features', 'alias', 'date_nanos', 'semantic_text',
  'integer_range', 'long_range', 'float_range', 'double_range', 'date_range', 'ip_range', 'completion', 'percolator', 'join',
]); // prettier-ignore
const ROOT_KEYS = new Set([
  'properties', 'dynamic', '_meta', '_source', '_routing', 'date_detection', 'numeric_detection', 'dynamic_templates',
  'dynamic_date_formats', 'runtime', 'enabled', 'subobjects', '_field_names', '_data_stream_timestamp',
]); // prettier-ignore
const NOT_UPDATABLE: Record<string, unknown> = {
  normalizer: null,
  format: null,
  index: true,
  doc_values: true,
  store: false,
  analyzer: null,
  null_value: null,
};
const FILTERS: Record<string, (s: string) => string> = {
  lowercase: (s) => s.toLowerCase(),
  uppercase: (s) => s.toUpperCase(),
  asciifolding: (s) => s.normalize('NFD').replace(/[\u0300-\u036f]/g, ''),
  trim: (s) => s.trim(),
};
const NOOP_FILTERS = new Set([
  'cjk_width',
  'decimal_digit',
  'elision',
  'arabic_normalization',
  'german_normalization',
  'persian_normalization',
  'scandinavian_folding',
  'serbian_normalization',
]);

export function typeOf(m: Obj): string {
  return typeof m.type === 'string' ? m.type : 'object';
}

export function isObjectType(t: string): boolean {
  return t === 'object' || t === 'nested';
}

// ---- settings ---------------------------------------------------------------------------------

function expandDots(o: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) {
    const parts = k.split('.');
    let cur = out;
    for (const p of parts.slice(0, -1)) cur = (isObj(cur[p]) ? cur[p] : (cur[p] = {})) as Obj;
    const last = parts[parts.length - 1] as string;
    const val = isObj(v) ? expandDots(v) : v;
    cur[last] = isObj(cur[last]) && isObj(val) ? { ...(cur[last] as Obj), ...val } : val;
  }
  return out;
}

function stringifyLeaves(v: unknown): unknown {
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, stringifyLeaves(x)]));
  if (Array.isArray(v)) return v.map(stringifyLeaves);
  return v === null ? null : String(v);
}

/** `{number_of_shards: 1}`, `{'index.number_of_shards': 1}` and `{index: {number_of_shards: 1}}` all become the last form, values as strings. */
export function normalizeSettings(s: unknown): Obj {
  const e = isObj(s) ? expandDots(s) : {};
  const index: Obj = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === 'index' && isObj(v)) Object.assign(index, v);
    else index[k] = v;
  }
  return { index: stringifyLeaves(index) as Obj };
}

export function indexSetting(settings: Obj, path: string): unknown {
  let cur: unknown = settings.index;
  for (const p of path.split('.')) cur = isObj(cur) ? cur[p] : undefined;
  return cur;
}

/** The normalizer functions an index's settings define (plus the built-in `lowercase`). */
export function normalizers(settings: Obj): Map<string, (s: string) => string> {
  const out = new Map<string, (s: string) => string>([['lowercase', FILTERS.lowercase as (s: string) => string]]);
  const defs = indexSetting(settings, 'analysis.normalizer');
  const custom = indexSetting(settings, 'analysis.filter');
  if (!isObj(defs)) return out;
  for (const [name, def] of Object.entries(defs)) {
    const filters = isObj(def) ? (Array.isArray(def.filter) ? def.filter : def.filter === undefined ? [] : [def.filter]) : [];
    const fns = filters.map((f) => {
      const builtin = isObj(custom) && isObj(custom[String(f)]) ? String((custom[String(f)] as Obj).type) : String(f);
      const fn = FILTERS[builtin];
      if (fn) return fn;
      if (NOOP_FILTERS.has(builtin)) return (s: string) => s;
      return fail(400, 'illegal_argument_exception', `Custom normalizer [${name}] failed to find filter under name [${String(f)}]`);
    });
    out.set(name, (s) => fns.reduce((acc, fn) => fn(acc), s));
  }
  return out;
}

// ---- mappings ---------------------------------------------------------------------------------

function mappingError(reason: string): never {
  throw new EsError(400, {
    type: 'mapper_parsing_exception',
    reason: `Failed to parse mapping: ${reason}`,
    caused_by: { type: 'mapper_parsing_exception', reason },
  });
}

/** Expands dotted property names (`"a.b": {...}` → `a: {properties: {b: ...}}`) as Elasticsearch does. */
export function normalizeMappings(m: unknown): Obj {
  if (m === undefined || m === null) return {};
  if (!isObj(m)) mappingError('mappings must be an object');
  const out: Obj = { ...clone(m) };
  if (isObj(out.properties)) out.properties = normalizeProps(out.properties);
  return out;
}

function normalizeProps(props: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(props)) {
    const parts = k.split('.');
    let target = out;
    for (const p of parts.slice(0, -1)) {
      const o = (isObj(target[p]) ? target[p] : (target[p] = {})) as Obj;
      target = (isObj(o.properties) ? o.properties : (o.properties = {})) as Obj;
    }
    const m = isObj(v) ? { ...v } : v;
    if (isObj(m) && isObj(m.properties)) m.properties = normalizeProps(m.properties);
    target[parts[parts.length - 1] as string] = m;
  }
  return out;
}

/**
 * Rejects what a real cluster rejects when it parses a mapping (types, parameters, normalizers).
 * Without `settings` normalizer names are not checked.
 */
export function validateMappings(mappings: Obj, settings: Obj | undefined): void {
  for (const k of Object.keys(mappings)) {
    if (!ROOT_KEYS.has(k)) mappingError(`Root mapping definition has unsupported parameters:  [${k} : ${JSON.stringify(mappings[k])}]`);
  }
  const norms = settings ? normalizers(settings) : undefined;
  const walk = (props: unknown, prefix: string): void => {
    if (props === undefined) return;
    if (!isObj(props)) mappingError(`Expected map for property [properties] on field [${prefix || '_doc'}]`);
    for (const [name, m] of Object.entries(props)) {
      const path = prefix ? `${prefix}.${name}` : name;
      if (!isObj(m)) mappingError(`Expected map for property [fields] on field [${path}] but got a class java.lang.String`);
      const type = typeOf(m);
      const kind = NUMERIC.has(type) ? 'numeric' : type;
      const allowed = PARAMS[kind];
      if (!allowed && !OTHER_TYPES.has(type)) mappingError(`No handler for type [${type}] declared on field [${name}]`);
      if (allowed) {
        for (const p of Object.keys(m))
          if (!allowed.includes(p)) mappingError(`unknown parameter [${p}] on mapper [${path}] of type [${type}]`);
      }
      if (typeof m.normalizer === 'string' && norms && !norms.has(m.normalizer))
        mappingError(`normalizer [${m.normalizer}] not found for field [${path}]`);
      if (m.ignore_above !== undefined && !Number.isInteger(Number(m.ignore_above)))
        mappingError(`failed to parse [ignore_above] on field [${path}]`);
      if (isObjectType(type)) walk(m.properties, path);
      if (m.fields !== undefined) {
        if (!isObj(m.fields)) mappingError(`Expected map for property [fields] on field [${path}]`);
        walk(m.fields, path);
      }
    }
  };
  walk(mappings.properties, '');
}

/** Composition of template mappings: objects merge, a later field definition replaces an earlier one. */
export function composeMappings(a: Obj, b: Obj): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (k === 'properties' && isObj(v)) {
      const props: Obj = { ...(isObj(a.properties) ? a.properties : {}) };
      for (const [name, bm] of Object.entries(v)) {
        const am = props[name];
        props[name] = isObj(am) && isObj(bm) && isObjectType(typeOf(am)) && isObjectType(typeOf(bm)) ? composeMappings(am, bm) : clone(bm);
      }
      out.properties = props;
    } else out[k] = clone(v);
  }
  return out;
}

function conflict(reason: string): never {
  fail(400, 'illegal_argument_exception', reason);
}

/** A PUT _mapping merged into an existing mapping: additive, with the conflicts a real cluster refuses. */
export function mergeMappingUpdate(a: Obj, b: Obj, path = ''): Obj {
  const out: Obj = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (k === 'properties' && isObj(v)) out.properties = mergePropsUpdate(isObj(a.properties) ? a.properties : {}, v, path);
    else if (k === 'fields' && isObj(v)) out.fields = mergePropsUpdate(isObj(a.fields) ? a.fields : {}, v, path);
    else out[k] = clone(v);
  }
  return out;
}

function mergePropsUpdate(a: Obj, b: Obj, path: string): Obj {
  const out: Obj = { ...a };
  for (const [k, bm] of Object.entries(b)) {
    const p = path ? `${path}.${k}` : k;
    const am = a[k];
    if (!isObj(am) || !isObj(bm)) {
      out[k] = clone(bm);
      continue;
    }
    const ta = typeOf(am);
    const tb = typeOf(bm);
    if (isObjectType(ta) && isObjectType(tb)) {
      if (ta !== tb)
        conflict(`object mapping [${p}] can't be changed from ${ta === 'nested' ? 'nested to non-nested' : 'non-nested to nested'}`);
      if ((am.enabled ?? true) !== (bm.enabled ?? true)) conflict(`the [enabled] parameter can't be updated for the object mapping [${p}]`);
      out[k] = mergeMappingUpdate(am, bm, p);
      continue;
    }
    if (isObjectType(ta) !== isObjectType(tb)) conflict(`can't merge a non object mapping [${p}] with an object mapping`);
    if (ta !== tb) conflict(`mapper [${p}] cannot be changed from type [${ta}] to [${tb}]`);
    for (const [param, dflt] of Object.entries(NOT_UPDATABLE)) {
      const x = am[param] ?? dflt;
      const y = bm[param] ?? dflt;
      if (!deepEqual(x, y)) {
        conflict(
          `Mapper for [${p}] conflicts with existing mapper:\n\tCannot update parameter [${param}] from [${String(x)}] to [${String(y)}]`,
        );
      }
    }
    out[k] = mergeMappingUpdate({ ...am, ...(am.fields ? { fields: am.fields } : {}) }, bm, p);
    for (const key of Object.keys(am)) if (!(key in bm) && key !== 'fields') delete (out[k] as Obj)[key];
  }
  return out;
}

/** Mapped fields as `index.mapping.total_fields.limit` counts them (objects and multi-fields included). */
export function countFields(mappings: Obj): number {
  let n = 0;
  const walk = (props: unknown): void => {
    if (!isObj(props)) return;
    for (const m of Object.values(props)) {
      if (!isObj(m)) continue;
      n++;
      walk(m.properties);
      walk(m.fields);
    }
  };
  walk(mappings.properties);
  return n;
}

/** Every field (and object) path of a mapping, with its definition. */
export function buildDefs(mappings: Obj, settings: Obj): Map<string, FieldDef> {
  const defs = new Map<string, FieldDef>();
  const norms = normalizers(settings);
  const walk = (props: unknown, prefix: string, nestedPath: string | undefined): void => {
    if (!isObj(props)) return;
    for (const [name, m] of Object.entries(props)) {
      if (!isObj(m)) continue;
      const path = prefix ? `${prefix}.${name}` : name;
      const type = typeOf(m);
      const normalize = typeof m.normalizer === 'string' ? norms.get(m.normalizer) : undefined;
      defs.set(path, { path, type, m, ...(normalize ? { normalize } : {}), ...(nestedPath ? { nestedPath } : {}) });
      if (isObjectType(type) && m.enabled !== false) walk(m.properties, path, type === 'nested' ? path : nestedPath);
      if (isObj(m.fields)) walk(m.fields, path, nestedPath);
    }
  };
  walk(mappings.properties, '', undefined);
  return defs;
}

/** The definition a query, sort or aggregation on `field` uses (flattened keys included); undefined: unmapped. */
export function lookupDef(defs: Map<string, FieldDef>, field: string): FieldDef | undefined {
  const d = defs.get(field);
  if (d) return isObjectType(d.type) ? undefined : d;
  for (let i = field.lastIndexOf('.'); i > 0; i = field.lastIndexOf('.', i - 1)) {
    const parent = defs.get(field.slice(0, i));
    if (parent?.type === 'flattened') return { path: field, type: 'flattened', m: parent.m };
  }
  return undefined;
}
