/**
 * `_search`, `_count` and `_delete_by_query` of the fake: only refreshed documents, per-index
 * (shard) failures with the real partial/total failure rules, the result window, search_after,
 * `_source` filtering and hit/total shapes.
 */
import { aggregate } from './aggs.js';
import type { Cluster, DocRecord, IndexState } from './cluster.js';
import { indexSetting, type FieldDef } from './mapping.js';
import { compileQuery, parsing, perShard, phaseFailure, shardFail, type Failure } from './query.js';
import { compareKeys, parseSort, sortKey, sortKind, type Hit, type SortKey, type SortKind, type SortSpec } from './sort.js';
import { fail, filterSource, isObj, list, truthyParam, unsupported, validationFailed, type Obj } from './util.js';
import { parseDate } from './values.js';
// ---- search -----------------------------------------------------------------------------------

const SEARCH_KEYS = new Set([
  'query', 'sort', 'size', 'from', '_source', 'search_after', 'track_total_hits', 'aggs', 'aggregations', 'track_scores',
  'timeout', 'terminate_after', 'version', 'seq_no_primary_term', 'post_filter', 'explain', 'profile', 'stats',
]); // prettier-ignore
const KNOWN_UNEMULATED = [
  'fields',
  'docvalue_fields',
  'stored_fields',
  'highlight',
  'collapse',
  'pit',
  'runtime_mappings',
  'indices_boost',
  'rescore',
  'suggest',
  'knn',
  'slice',
  'script_fields',
  'min_score',
  'ext',
  'retriever',
  'rank',
];

export function sourceOptions(
  bodySource: unknown,
  qs: Record<string, string>,
): { enabled: boolean; includes: string[]; excludes: string[] } {
  let spec: unknown = bodySource;
  if (qs._source !== undefined) spec = qs._source === 'true' ? true : qs._source === 'false' ? false : list(qs._source);
  let enabled = spec !== false && spec !== 'false';
  let includes: string[] = [];
  let excludes: string[] = [];
  if (typeof spec === 'string' || Array.isArray(spec)) includes = list(spec);
  else if (isObj(spec)) {
    includes = list(spec.includes ?? spec.include);
    excludes = list(spec.excludes ?? spec.exclude);
  }
  if (qs._source_includes !== undefined) {
    includes = list(qs._source_includes);
    enabled = true;
  }
  if (qs._source_excludes !== undefined) {
    excludes = list(qs._source_excludes);
    enabled = true;
  }
  return { enabled, includes, excludes };
}

export function sourceOf(rec: DocRecord, o: { includes: string[]; excludes: string[] }): Obj {
  return filterSource(rec.source, o.includes, o.excludes);
}

function matching(indices: IndexState[], query: unknown, failures: Failure[]): Hit[] {
  const hits: Hit[] = [];
  let order = 0;
  const compiled = perShard(indices, failures, (idx) => compileQuery(query ?? { match_all: {} }, idx));
  for (const idx of indices) {
    const m = compiled.get(idx);
    if (!m) continue;
    for (const rec of idx.visible.values()) {
      const score = m(rec.indexed, rec);
      if (score !== null) hits.push({ idx, rec, d: rec.indexed, score, order: order++ });
      else order++;
    }
  }
  return hits;
}

export function search(cluster: Cluster, target: string | undefined, bodyIn: unknown, qs: Record<string, string>): Obj {
  const started = Date.now();
  const body: Obj = isObj(bodyIn) ? bodyIn : {};
  for (const k of Object.keys(body)) {
    if (KNOWN_UNEMULATED.includes(k)) unsupported(`the search option [${k}]`);
    if (!SEARCH_KEYS.has(k)) parsing(`Unknown key for a START_OBJECT in [${k}].`);
  }
  if (qs.q !== undefined) unsupported('the q= query string');
  if (qs.scroll !== undefined) unsupported('scroll searches');
  const indices = cluster.resolve(target, {
    ignoreUnavailable: truthyParam(qs.ignore_unavailable),
    allowNoIndices: qs.allow_no_indices !== 'false',
  });
  const size = Number(body.size ?? qs.size ?? 10);
  const from = Number(body.from ?? qs.from ?? 0);
  if (!Number.isInteger(size) || size < 0) fail(400, 'illegal_argument_exception', `[size] parameter cannot be negative, found [${size}]`);
  if (!Number.isInteger(from) || from < 0) fail(400, 'illegal_argument_exception', `[from] parameter cannot be negative, found [${from}]`);
  const after = body.search_after;
  if (after !== undefined && from > 0) validationFailed(['`from` parameter must be set to 0 when `search_after` is used']);
  const sortSpecs = body.sort !== undefined ? parseSort(body.sort) : qs.sort !== undefined ? parseSort(qs.sort) : undefined;
  if (after !== undefined && (!Array.isArray(after) || !sortSpecs || after.length !== sortSpecs.length)) {
    fail(
      400,
      'illegal_argument_exception',
      `search_after has ${Array.isArray(after) ? after.length : 0} value(s) but sort has ${sortSpecs?.length ?? 0}.`,
    );
  }
  const failures: Failure[] = [];
  perShard(indices, failures, (idx) => {
    const window = Number(indexSetting(idx.settings, 'max_result_window') ?? 10000);
    if (from + size > window) {
      shardFail(
        idx,
        'illegal_argument_exception',
        `Result window is too large, from + size must be less than or equal to: [${window}] but was [${from + size}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.`,
      );
    }
  });
  const kinds = sortSpecs ? perShard(indices, failures, (idx) => sortSpecs.map((s) => sortKind(idx, s))) : undefined;
  let hits = matching(indices, body.query, failures);
  const aggregations = body.aggs ?? body.aggregations;
  const aggResult = aggregations !== undefined ? aggregate(aggregations, indices, hits, failures, truthyParam(qs.typed_keys)) : undefined;
  const ok = indices.filter((i) => !failures.some((f) => f.idx === i));
  if (failures.length > 0 && ok.length === 0) throw phaseFailure(failures, 'all shards failed');
  if (failures.length > 0 && qs.allow_partial_search_results === 'false') throw phaseFailure(failures, 'Partial shards failure');
  hits = hits.filter((h) => ok.includes(h.idx));
  if (body.post_filter !== undefined) {
    const pf = new Map(ok.map((idx) => [idx, compileQuery(body.post_filter, idx)]));
    hits = hits.filter((h) => pf.get(h.idx)?.(h.d, h.rec) !== null);
  }
  const total = hits.length;

  if (sortSpecs && kinds) {
    for (const h of hits) {
      const k = kinds.get(h.idx) as { kind: SortKind; def?: FieldDef }[];
      h.keys = sortSpecs.map((s, i) => sortKey(s, (k[i] as { kind: SortKind }).kind, k[i]?.def, h.idx, h));
    }
    const cmp = (a: SortKey[], b: SortKey[]): number => {
      for (let i = 0; i < sortSpecs.length; i++) {
        const c = compareKeys(a[i] ?? null, b[i] ?? null, sortSpecs[i] as SortSpec);
        if (c !== 0) return c;
      }
      return 0;
    };
    hits.sort((a, b) => cmp(a.keys as SortKey[], b.keys as SortKey[]) || a.order - b.order);
    if (Array.isArray(after)) {
      const afterKeys = after.map((v, i): SortKey => {
        if (v === null) return null;
        const spec = sortSpecs[i] as SortSpec;
        const anyKinds = [...kinds.values()][0]?.[i];
        if (anyKinds?.kind === 'string') return String(v);
        const n =
          anyKinds?.def?.type === 'date' && typeof v === 'string' && !/^-?\d+$/.test(v) ? parseDate(v, anyKinds.def.m.format) : Number(v);
        if (typeof n !== 'number' || Number.isNaN(n))
          fail(400, 'illegal_argument_exception', `Failed to parse search_after value for field [${spec.field}].`);
        return n;
      });
      hits = hits.filter((h) => cmp(h.keys as SortKey[], afterKeys) > 0);
    }
  } else {
    hits.sort((a, b) => b.score - a.score || a.order - b.order);
  }

  const src = sourceOptions(body._source, qs);
  const scored = !sortSpecs || body.track_scores === true || sortSpecs.some((s) => s.field === '_score');
  const page = hits.slice(from, from + size);
  const tth =
    body.track_total_hits ??
    (qs.track_total_hits === undefined
      ? undefined
      : qs.track_total_hits === 'true'
        ? true
        : qs.track_total_hits === 'false'
          ? false
          : Number(qs.track_total_hits));
  const cap = tth === undefined ? 10000 : tth === true ? Infinity : tth === false ? -1 : Number(tth);
  const hitsOut: Obj = {};
  if (cap >= 0) hitsOut.total = total > cap ? { value: cap, relation: 'gte' } : { value: total, relation: 'eq' };
  hitsOut.max_score = scored && page.length > 0 ? Math.max(...hits.map((h) => h.score)) : null;
  hitsOut.hits = page.map((h) => {
    const out: Obj = { _index: h.idx.name, _id: h.rec.id };
    if (body.version === true) out._version = h.rec.version;
    if (body.seq_no_primary_term === true) Object.assign(out, { _seq_no: h.rec.seqNo, _primary_term: 1 });
    out._score = scored ? h.score : null;
    if (h.rec.ignored.length > 0) out._ignored = [...h.rec.ignored];
    if (src.enabled) out._source = sourceOf(h.rec, src);
    if (h.keys) out.sort = h.keys;
    return out;
  });
  const res: Obj = {
    took: Date.now() - started,
    timed_out: false,
    _shards: {
      total: indices.length,
      successful: ok.length,
      skipped: 0,
      failed: failures.length,
      ...(failures.length > 0
        ? { failures: failures.map((f) => ({ shard: 0, index: f.idx.name, node: 'fake-node-0', reason: f.cause })) }
        : {}),
    },
    hits: hitsOut,
  };
  if (aggResult) res.aggregations = aggResult;
  return res;
}

// ---- count and delete by query ----------------------------------------------------------------

export function count(cluster: Cluster, target: string | undefined, bodyIn: unknown, qs: Record<string, string>): Obj {
  const body: Obj = isObj(bodyIn) ? bodyIn : {};
  for (const k of Object.keys(body)) if (k !== 'query') parsing(`request does not support [${k}]`);
  if (qs.q !== undefined) unsupported('the q= query string');
  const indices = cluster.resolve(target, { ignoreUnavailable: truthyParam(qs.ignore_unavailable) });
  const failures: Failure[] = [];
  const hits = matching(indices, body.query, failures);
  if (failures.length > 0 && failures.length === indices.length) throw phaseFailure(failures, 'all shards failed');
  return {
    count: hits.length,
    _shards: { total: indices.length, successful: indices.length - failures.length, skipped: 0, failed: failures.length },
  };
}

export function deleteByQuery(
  cluster: Cluster,
  target: string,
  bodyIn: unknown,
  qs: Record<string, string>,
): { status: number; body: Obj } {
  const started = Date.now();
  if (qs.wait_for_completion === 'false') unsupported('asynchronous delete-by-query tasks');
  const body: Obj = isObj(bodyIn) ? bodyIn : {};
  if (body.query === undefined) validationFailed(['query is missing']);
  for (const k of Object.keys(body)) if (k !== 'query' && k !== 'max_docs') parsing(`Unknown key for a START_OBJECT in [${k}].`);
  const indices = cluster.resolve(target, { ignoreUnavailable: truthyParam(qs.ignore_unavailable) });
  const failures: Failure[] = [];
  let hits = matching(indices, body.query, failures);
  if (failures.length > 0) throw phaseFailure(failures, 'all shards failed');
  const max = body.max_docs ?? qs.max_docs;
  if (max !== undefined) hits = hits.slice(0, Number(max));
  let deleted = 0;
  let conflicts = 0;
  const errors: Obj[] = [];
  for (const h of hits) {
    const cur = h.idx.live.get(h.rec.id);
    if (!cur || cur.seqNo !== h.rec.seqNo) {
      conflicts++;
      if (qs.conflicts !== 'proceed') {
        errors.push({
          index: h.idx.name,
          id: h.rec.id,
          cause: { type: 'version_conflict_engine_exception', reason: `[${h.rec.id}]: version conflict, required seqNo [${h.rec.seqNo}], primary term [1]. ${cur ? `current document has seqNo [${cur.seqNo}] and primary term [1]` : 'but no document was found'}`, index_uuid: h.idx.uuid, shard: '0', index: h.idx.name },
          status: 409,
        }); // prettier-ignore
        break;
      }
      continue;
    }
    h.idx.live.delete(h.rec.id);
    h.idx.seqNo++;
    h.idx.dirty = true;
    deleted++;
  }
  if (truthyParam(qs.refresh)) indices.forEach((i) => cluster.refresh(i));
  const res = {
    took: Date.now() - started,
    timed_out: false,
    total: hits.length,
    deleted,
    batches: Math.max(1, Math.ceil(hits.length / 1000)),
    version_conflicts: conflicts,
    noops: 0,
    retries: { bulk: 0, search: 0 },
    throttled_millis: 0,
    requests_per_second: -1,
    throttled_until_millis: 0,
    failures: errors,
  };
  return { status: errors.length > 0 ? 409 : 200, body: res };
}
