import type { Client, estypes } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import { DEFAULT_MAX_DEPTH, ELASTICSEARCH_MAX_DEPTH, type BehaviourDoc } from '../../normalize/index.js';
import {
  depthRejection,
  invalidDocReason,
  jsonText,
  pivotKey,
  type DocMeta,
  type ItemResult,
  type PivotKind,
  type Sink,
  type SinkDoc,
} from '../Sink.js';
import { classifyRequestError, esFaultError, isIndexNotFound, isNotFound, readFailure } from './classify.js';
import { bulkSender, type BulkOutcome, type PreparedItem } from './bulkSender.js';
import { PIVOT_FIELDS, topValuesTerms } from './mapping.js';
import { esNames, type EsNames } from './names.js';
import { ECS_ROOTS, sourceJson, stripProjection } from './project.js';

export interface ElasticsearchSinkOptions {
  /** Documents nested deeper are rejected `too_deep` (never above Elasticsearch's own 1,000). */
  maxDepth?: number;
  prefix?: string;
  /** Upper bound of one bulk request body, in bytes (a single larger document goes alone). */
  flushBytes?: number;
  /** Bulk requests in flight at once for one `upsert` call. */
  concurrency?: number;
  /** `refresh` of the bulk requests: false in production, `wait_for` where a read must see the write. */
  refresh?: boolean | 'wait_for';
  /** Page size of `query` (search_after pages; at most 10 000). */
  queryPageSize?: number;
  /** How long the list of indices behind the write alias is trusted (rollover detection). */
  aliasCacheMs?: number;
  /**
   * Called before every write; typically a memoized `setupElasticsearch`. It is called again
   * after a write found the alias missing.
   */
  ready?: () => Promise<void>;
  /** Called when a write found the alias missing, so `ready` sets it up again. */
  onMissingAlias?: () => void;
}

type Prepared = PreparedItem;

/** Elasticsearch accepts external versions in [0, 2^63); JavaScript integers are exact up to 2^53. */
const MAX_VERSION = Number.MAX_SAFE_INTEGER;
const MAX_ID_BYTES = 512;
const MAX_RESULT_WINDOW = 10_000;

/**
 * The production sink. Writes go through the write alias as bulk `index` actions carrying
 * `version = last_modification_date` with `version_type = external_gte`: Elasticsearch itself
 * refuses to let an older report replace a newer one (409, reported as ok + stale), and an equal
 * version rewrites the same state, so replays converge.
 *
 * Bulk bodies are bounded by `flushBytes`, sent `concurrency` at a time, and every item is
 * classified on its own (see classify.ts); a request-level 400/413 is bisected so one bad
 * document never fails its chunk. Reads strip the ECS projection so `get` returns exactly the
 * canonical document.
 *
 * The alias is meant to point at one index (sandtrail never rolls it over). If an operator adds
 * indices behind it anyway, each chunk first looks its ids up (one `ids` query, no source) and
 * writes an id found there to the index that holds it; this is best effort only: ids written
 * within the last refresh interval, or within `aliasCacheMs` of the change, can be stored twice.
 */
export class ElasticsearchSink implements Sink {
  readonly kind = 'elasticsearch';
  readonly names: EsNames;
  private readonly flushBytes: number;
  private readonly concurrency: number;
  private readonly pageSize: number;
  private readonly aliasCacheMs: number;
  private aliasCache: { at: number; indices: string[] } | undefined;

  constructor(
    private readonly client: Client,
    private readonly o: ElasticsearchSinkOptions = {},
  ) {
    this.names = esNames(o.prefix);
    this.flushBytes = Math.max(1024, o.flushBytes ?? 5 * 1024 * 1024);
    this.concurrency = Math.max(1, o.concurrency ?? 2);
    this.pageSize = Math.min(MAX_RESULT_WINDOW, Math.max(1, o.queryPageSize ?? 5000));
    this.aliasCacheMs = o.aliasCacheMs ?? 30_000;
  }

  // ---- writes ------------------------------------------------------------------------------

  async upsert(docs: readonly SinkDoc[]): Promise<ItemResult[]> {
    const results: ItemResult[] = new Array<ItemResult>(docs.length);
    const pending: { i: number; doc: DocMeta; source: string }[] = [];
    docs.forEach((item, i) => {
      const doc = item.meta;
      const local = localRejection(doc);
      if (local) {
        results[i] = { id: String((doc as { id?: unknown } | null)?.id), status: 'rejected', code: local.code, reason: local.reason };
        return;
      }
      // Elasticsearch's parser refuses past 1,000 levels, and for the whole bulk request: refuse first, per document
      const deep = depthRejection(doc, Math.min(this.o.maxDepth ?? DEFAULT_MAX_DEPTH, ELASTICSEARCH_MAX_DEPTH));
      if (deep) {
        results[i] = { id: doc.id, status: 'rejected', ...deep };
        return;
      }
      try {
        // the ECS projection reads the whole document: the only place the index stage parses it
        const text = jsonText(item);
        pending.push({ i, doc, source: sourceJson(JSON.parse(text) as BehaviourDoc, text) });
      } catch (err) {
        results[i] = { id: doc.id, status: 'rejected', code: 'serialization_failed', reason: (err as Error).message };
      }
    });
    if (pending.length === 0) return results;

    const failAll = (kind: 'retryable' | 'rejected', code: string, reason: string): ItemResult[] => {
      for (const p of pending) results[p.i] = { id: p.doc.id, status: kind, code, reason };
      return results;
    };

    let locations: Map<string, string>;
    try {
      await this.o.ready?.();
      locations = await this.locate(pending.map((p) => p.doc.id));
    } catch (err) {
      if (err instanceof SandtrailError) throw err;
      const f = classifyRequestError(err);
      if (f.kind === 'auth') throw authError(f.reason, err);
      if (f.kind === 'store') throw esFaultError(f.fault, this.names.alias, f.reason, err);
      if (f.kind === 'retryable') return failAll('retryable', f.code, f.reason);
      throw new SandtrailError('SINK_UNAVAILABLE', `Elasticsearch is not ready for writes: ${f.reason}`, {}, { cause: err });
    }

    const prepared = pending.map(({ i, doc, source }) => {
      const target = locations.get(doc.id);
      const meta: Record<string, unknown> = {
        _index: target ?? this.names.alias,
        _id: doc.id,
        version: doc.last_modification_date,
        version_type: 'external_gte',
      };
      // without an existing copy the write must go through the alias, never auto-create an index
      if (!target) meta.require_alias = true;
      const action = JSON.stringify({ index: meta });
      return {
        i,
        id: doc.id,
        version: doc.last_modification_date,
        action,
        source,
        bytes: Buffer.byteLength(action) + Buffer.byteLength(source) + 2,
      };
    });

    const chunks: Prepared[][] = [];
    let current: Prepared[] = [];
    let size = 0;
    for (const p of prepared) {
      if (current.length > 0 && size + p.bytes > this.flushBytes) {
        chunks.push(current);
        current = [];
        size = 0;
      }
      current.push(p);
      size += p.bytes;
    }
    if (current.length > 0) chunks.push(current);

    const outcome: BulkOutcome = { missingIndex: false };
    const send = bulkSender(this.client, this.o.refresh, results, outcome);
    await runPool(chunks, this.concurrency, send);

    if (outcome.missingIndex) {
      this.aliasCache = undefined;
      this.o.onMissingAlias?.();
      // without automatic setup nothing will create it: the store's fault until an operator does
      if (!this.o.ready)
        throw new SandtrailError(
          'STORE_READONLY',
          `index missing: Elasticsearch write alias ${this.names.alias} does not exist and elasticsearch.setup is manual; run sandtrail es setup`,
          { index: this.names.alias },
        );
    }
    if (outcome.auth) throw authError(outcome.auth.reason, outcome.auth.err);
    if (outcome.fault) throw esFaultError(outcome.fault.fault, this.names.alias, outcome.fault.reason, outcome.fault.err);
    return results;
  }

  /** Concrete index of each id already stored, when the alias spans more than one index. */
  private async locate(ids: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const indices = await this.aliasIndices();
    if (indices.length <= 1) return out;
    for (let k = 0; k < ids.length; k += MAX_RESULT_WINDOW) {
      const slice = ids.slice(k, k + MAX_RESULT_WINDOW);
      const r = await this.client.search({
        index: this.names.alias,
        query: { ids: { values: slice } },
        _source: false,
        size: slice.length,
        track_total_hits: false,
        allow_partial_search_results: false,
      });
      for (const h of r.hits.hits) if (h._id) out.set(h._id, h._index);
    }
    return out;
  }

  private async aliasIndices(): Promise<string[]> {
    const now = Date.now();
    if (this.aliasCache && now - this.aliasCache.at < this.aliasCacheMs) return this.aliasCache.indices;
    let indices: string[];
    try {
      indices = Object.keys(await this.client.indices.getAlias({ name: this.names.alias }));
    } catch (err) {
      if (isNotFound(err)) indices = [];
      else if (classifyRequestError(err).kind === 'auth')
        indices = [this.names.alias]; // no view privilege: assume one index
      else throw err;
    }
    this.aliasCache = { at: now, indices };
    return indices;
  }

  // ---- reads -------------------------------------------------------------------------------

  async get(id: string): Promise<BehaviourDoc | null> {
    try {
      // realtime GET through the alias (works while it points at one index)
      const r = await this.client.get<Record<string, unknown>>({ index: this.names.alias, id, _source_excludes: [...ECS_ROOTS] });
      return r.found && r._source ? stripProjection(r._source) : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      if (!isMultiIndexAliasError(err)) throw readError('get', err);
    }
    // after a rollover: a search by id across every index behind the alias
    try {
      const r = await this.client.search<Record<string, unknown>>({
        index: this.names.alias,
        query: { ids: { values: [id] } },
        _source: { excludes: [...ECS_ROOTS] },
        size: 1,
      });
      const src = r.hits.hits[0]?._source;
      return src ? stripProjection(src) : null;
    } catch (err) {
      if (isIndexNotFound(err)) return null;
      throw readError('get', err);
    }
  }

  /**
   * Ids matching a pivot, sorted. Large result sets are read page by page with search_after on
   * the `id` keyword (unique and immutable, so no document is skipped or repeated even while
   * writers run; documents written during the scan may or may not appear). No point-in-time is
   * needed for that guarantee, and none is left open if the caller gives up.
   */
  async query(kind: PivotKind, value: string): Promise<string[]> {
    const field = PIVOT_FIELDS[kind];
    const key = pivotKey(value);
    if (key === '') return [];
    const ids: string[] = [];
    let after: estypes.SortResults | undefined;
    try {
      for (;;) {
        const r = await this.client.search({
          index: this.names.alias,
          query: { term: { [field]: key } },
          sort: [{ id: 'asc' }],
          _source: false,
          size: this.pageSize,
          track_total_hits: false,
          allow_partial_search_results: false,
          ...(after ? { search_after: after } : {}),
        });
        const hits = r.hits.hits;
        for (const h of hits) if (h._id) ids.push(h._id);
        if (hits.length < this.pageSize) break;
        after = hits[hits.length - 1]?.sort;
        if (!after) break;
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw readError('query', err);
    }
    return ids;
  }

  async count(): Promise<number> {
    try {
      return (await this.client.count({ index: this.names.alias })).count;
    } catch (err) {
      if (isIndexNotFound(err)) return 0;
      throw readError('count', err);
    }
  }

  async top(kind: Exclude<PivotKind, 'sha256'>, limit: number): Promise<{ value: string; count: number }[]> {
    if (!Number.isInteger(limit) || limit <= 0) return [];
    try {
      const r = await this.client.search({
        index: this.names.alias,
        size: 0,
        track_total_hits: false,
        aggs: {
          top: { terms: topValuesTerms(kind, limit) },
        },
      });
      const agg = r.aggregations?.top as estypes.AggregationsStringTermsAggregate | undefined;
      const buckets = Array.isArray(agg?.buckets) ? agg.buckets : [];
      return buckets.map((b) => ({ value: String(b.key), count: b.doc_count }));
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw readError('top', err);
    }
  }
}

/** Problems Elasticsearch would reject for the whole bulk request, caught per document instead. */
function localRejection(doc: DocMeta): { code: string; reason: string } | undefined {
  const invalid = invalidDocReason(doc);
  if (invalid) return { code: 'invalid_document', reason: invalid };
  if (doc.last_modification_date < 0 || doc.last_modification_date > MAX_VERSION) {
    return { code: 'invalid_version', reason: `last_modification_date ${doc.last_modification_date} is not a valid external version` };
  }
  if (Buffer.byteLength(doc.id) > MAX_ID_BYTES) return { code: 'invalid_id', reason: `id is longer than ${MAX_ID_BYTES} bytes` };
  return undefined;
}

function isMultiIndexAliasError(err: unknown): boolean {
  const f = classifyRequestError(err);
  return f.kind === 'rejected' && f.code === 'illegal_argument_exception' && /more than one ind/.test(f.reason);
}

function authError(reason: string, cause: unknown): SandtrailError {
  return new SandtrailError('SINK_AUTH', `Elasticsearch refused the credentials or privileges: ${reason}`, {}, { cause });
}

function readError(op: string, err: unknown): SandtrailError {
  return readFailure(`Elasticsearch ${op}`, err);
}

/** Runs `fn` over `items` with at most `limit` calls in flight; `fn` must not throw. */
export async function runPool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
