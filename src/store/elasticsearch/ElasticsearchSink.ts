import type { Client, estypes } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import { DEFAULT_MAX_DEPTH, ELASTICSEARCH_MAX_DEPTH, type BehaviourDoc } from '../../normalize/index.js';
import { depthRejection, pivotKey, type ItemResult, type PivotKind, type ScanPage, type ScanQuery, type Sink } from '../Sink.js';
import { jsonText, type DocMeta, type SinkDoc } from '../../wire/index.js';
import { retentionCutoffs, type RetentionDays } from '../Retention.js';
import { classifyRequestError, describeCause, esFaultError, esStoreFault, isIndexNotFound, readFailure } from './classify.js';
import { bulkSender, chunksOf, dropSuperseded, itemBytes, runPool, type BulkOutcome, type PreparedItem } from './bulkSender.js';
import { PIVOT_FIELDS, topValuesTerms } from './mapping.js';
import { esNames, type EsNames } from './names.js';
import { localRejection, planWithSetup, PartitionsNotReady, replacedResult, type DocPlan } from './partitionWriter.js';
import { CopyLookupError, newestSource, PartitionList } from './partitions.js';
import { Locator } from './locator.js';
import { ECS_ROOTS, sourceBytes, stripProjection } from './project.js';
import { scanBehaviours } from './scanBehaviours.js';

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
  /** How long the list of partitions behind the alias is trusted (another writer's new day index is seen after it). */
  partitionsCacheMs?: number;
  /** Days a behaviour is kept after its last_modification_date: an older one is not written (its day index is deleted anyway). */
  retentionDays?: RetentionDays;
  /** The clock retention is judged by (ms since the epoch). */
  now?: () => number;
  /**
   * Called before every write; typically a memoized `setupElasticsearch`. It is called again
   * after a write found the alias missing (or a new day index outside it).
   */
  ready?: () => Promise<void>;
  /** Called when a write found the alias missing, so `ready` sets it up again. */
  onMissingAlias?: () => void;
}

const MAX_RESULT_WINDOW = 10_000;

/**
 * The production sink, over daily partitions: a behaviour lives in `<prefix>-behaviours-yyyy.MM.dd`,
 * the UTC day of its `last_modification_date`, and reads span every partition through the alias
 * `<prefix>-behaviours`. Each write records its day index in the locator, looks every id up in
 * the partitions its locator entry lists (one real-time mget: the same cost at 7 days as at 365; in
 * every partition until es setup has filled the locator of an older store), then sends bulk
 * `index` actions to the day indices with `version = last_modification_date`,
 * `version_type = external_gte`, and in the same request deletes each behaviour's copies in other
 * partitions (`external_gte` at the new version, so a copy that became newer meanwhile is kept):
 * one live document per behaviour. A copy newer than the write makes it ok + stale, and nothing
 * is written; Elasticsearch itself still refuses an older report in the same index (409, stale).
 *
 * Bulk bodies are bounded by `flushBytes`, sent `concurrency` at a time, and every item is
 * classified on its own (see classify.ts); a request-level 400/413 is bisected so one bad
 * document never fails its chunk. Reads strip the ECS projection so `get` returns exactly the
 * canonical document.
 *
 * Two writers storing two versions of one behaviour into different days at the same instant can
 * both miss the other's copy; a delete that finds a newer copy removes this write's own (ok,
 * stale), and any later write of that behaviour, stale replays included, deletes every copy but
 * the newest.
 */
export class ElasticsearchSink implements Sink {
  readonly kind = 'elasticsearch';
  readonly names: EsNames;
  private readonly flushBytes: number;
  private readonly concurrency: number;
  private readonly pageSize: number;
  private readonly partitions: PartitionList;
  private readonly locator: Locator;

  constructor(
    private readonly client: Client,
    private readonly o: ElasticsearchSinkOptions = {},
  ) {
    this.names = esNames(o.prefix);
    this.flushBytes = Math.max(1024, o.flushBytes ?? 5 * 1024 * 1024);
    this.concurrency = Math.max(1, o.concurrency ?? 2);
    this.pageSize = Math.min(MAX_RESULT_WINDOW, Math.max(1, o.queryPageSize ?? 5000));
    this.partitions = new PartitionList(client, this.names.alias, o.partitionsCacheMs ?? 1000);
    this.locator = new Locator(client, this.names);
  }

  /** Forgets the partition list (after partitions were deleted). */
  forgetPartitions(): void {
    this.partitions.forget();
    this.locator.forget();
  }

  // ---- writes ------------------------------------------------------------------------------

  async upsert(docs: readonly SinkDoc[]): Promise<ItemResult[]> {
    const results: ItemResult[] = new Array<ItemResult>(docs.length);
    const cutoff = retentionCutoffs({ days: this.o.retentionDays ?? 'off' }, this.o.now?.() ?? Date.now()).behavioursBefore;
    const pending: { i: number; doc: DocMeta; source: Buffer }[] = [];
    docs.forEach((item, i) => {
      const doc = item.meta;
      const local = localRejection(doc);
      if (local) {
        results[i] = { id: String((doc as { id?: unknown } | null)?.id), status: 'rejected', code: local.code, reason: local.reason };
        return;
      }
      // already past retention: ILM deletes its day index anyway, so nothing is written
      if (cutoff !== undefined && doc.last_modification_date < cutoff) {
        results[i] = { id: doc.id, status: 'ok', stale: true, expired: true };
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
        pending.push({ i, doc, source: sourceBytes(JSON.parse(jsonText(item)) as BehaviourDoc, item.json) });
      } catch (err) {
        results[i] = { id: doc.id, status: 'rejected', code: 'serialization_failed', reason: (err as Error).message };
      }
    });
    if (pending.length === 0) return results;

    const failAll = (kind: 'retryable' | 'rejected', code: string, reason: string): ItemResult[] => {
      for (const p of pending) results[p.i] = { id: p.doc.id, status: kind, code, reason };
      return results;
    };

    let plans: DocPlan[];
    try {
      await this.o.ready?.();
      const setup = { ready: this.o.ready, onMissingAlias: this.o.onMissingAlias };
      const wanted = pending.map((p) => ({ id: p.doc.id, lmd: p.doc.last_modification_date }));
      plans = await planWithSetup(this.client, this.names, this.partitions, this.locator, wanted, setup);
    } catch (err) {
      if (err instanceof SandtrailError) throw err;
      if (err instanceof PartitionsNotReady) return failAll('retryable', 'index_not_found_exception', err.message);
      if (err instanceof CopyLookupError) {
        const fault = esStoreFault(err.esCause);
        if (fault) throw esFaultError(fault, this.names.alias, describeCause(err.esCause), err);
        return failAll('retryable', err.esCause.type ?? 'mget_failed', describeCause(err.esCause));
      }
      const f = classifyRequestError(err);
      if (f.kind === 'auth') throw authError(f.reason, err);
      if (f.kind === 'store') throw esFaultError(f.fault, this.names.alias, f.reason, err);
      if (f.kind === 'retryable') return failAll('retryable', f.code, f.reason);
      throw new SandtrailError('SINK_UNAVAILABLE', `Elasticsearch is not ready for writes: ${f.reason}`, {}, { cause: err });
    }

    const prepared: PreparedItem[] = [];
    // a version a newer one of the same call replaces takes that one's outcome, after the bulk
    const replaced: { i: number; id: string }[] = [];
    const written = new Map<string, number>();
    pending.forEach(({ i, doc, source }, k) => {
      const plan = plans[k] as DocPlan;
      if (plan.kind === 'replaced') {
        replaced.push({ i, id: doc.id });
        return;
      }
      if (plan.kind === 'write') written.set(doc.id, i);
      const base = { i, id: doc.id, version: doc.last_modification_date, deletes: plan.deletes };
      if (plan.kind === 'stale') {
        results[i] = { id: doc.id, status: 'ok', stale: true };
        if (plan.deletes.length > 0) prepared.push({ ...base, bytes: itemBytes(base) });
        return;
      }
      const action = JSON.stringify({
        index: { _index: plan.target, _id: doc.id, version: doc.last_modification_date, version_type: 'external_gte' },
      });
      const item = { ...base, action, source, target: plan.target };
      prepared.push({ ...item, bytes: itemBytes(item) });
    });

    const outcome: BulkOutcome = { missingIndex: false };
    const send = bulkSender(this.client, this.o.refresh, results, outcome);
    await runPool(chunksOf(prepared, this.flushBytes), this.concurrency, send);
    if (outcome.superseded) await dropSuperseded(this.client, this.o.refresh, outcome.superseded, results);
    for (const r of replaced) results[r.i] = replacedResult(r.id, results[written.get(r.id) ?? -1]);

    if (outcome.missingIndex) {
      this.partitions.forget();
      this.o.onMissingAlias?.();
    }
    if (outcome.auth) throw authError(outcome.auth.reason, outcome.auth.err);
    if (outcome.fault) throw esFaultError(outcome.fault.fault, this.names.alias, outcome.fault.reason, outcome.fault.err);
    return results;
  }

  // ---- reads -------------------------------------------------------------------------------

  async get(id: string): Promise<BehaviourDoc | null> {
    let indices: string[] | null;
    try {
      indices = await this.partitions.get();
    } catch (err) {
      // a reader without view_index_metadata: a search by id (it sees what has been refreshed)
      if (classifyRequestError(err).kind === 'auth') return this.searchById(id);
      throw readError('get', err);
    }
    if (indices === null) return null;
    try {
      const src = await newestSource(this.client, indices, id, ECS_ROOTS);
      return src ? stripProjection(src) : null;
    } catch (err) {
      if (isIndexNotFound(err)) return null;
      throw readError('get', err);
    }
  }

  private async searchById(id: string): Promise<BehaviourDoc | null> {
    try {
      const r = await this.client.search<Record<string, unknown>>({
        index: this.names.alias,
        query: { ids: { values: [id] } },
        _source: { excludes: [...ECS_ROOTS] },
        sort: [{ last_modification_date: 'desc' }],
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
        // sorted by id: a copy left by a write in flight is adjacent to the other
        for (const h of hits) if (h._id && h._id !== ids[ids.length - 1]) ids.push(h._id);
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

  /** By id across the day indices (scanBehaviours). */
  scan(q: ScanQuery, cursor: string | undefined, limit: number): Promise<ScanPage> {
    return scanBehaviours(this.client, this.names.alias, q, cursor, limit);
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

function authError(reason: string, cause: unknown): SandtrailError {
  return new SandtrailError('SINK_AUTH', `Elasticsearch refused the credentials or privileges: ${reason}`, {}, { cause });
}

function readError(op: string, err: unknown): SandtrailError {
  return readFailure(`Elasticsearch ${op}`, err);
}

export { runPool };
