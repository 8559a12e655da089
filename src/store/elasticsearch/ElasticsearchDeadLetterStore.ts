import type { Client, estypes } from '@elastic/elasticsearch';
import type { SandtrailError } from '../../errors/index.js';
import { storeFailure, isIndexNotFound, isNotFound, itemFailure, type EsErrorCause } from './classify.js';
import { deleteMatching } from './deleteMatching.js';
import { esNames } from './names.js';
import { refreshForRead } from './refreshForRead.js';
import { scan } from './scan.js';
import type {
  DeadLetter,
  DeadLetterFilter,
  DeadLetterInput,
  DeadLetterStage,
  DeadLetterStore,
  DeadLetterSummary,
} from '../DeadLetterStore.js';

export interface EsBookkeepingOptions {
  prefix?: string;
  /**
   * `refresh` of writes. Unset: each store's own choice. Dead letters and batch-log entries are
   * written without one and their searches refresh first (`refreshForRead`); artefact and watch
   * writes, rare, refresh at once.
   */
  refresh?: boolean | 'wait_for';
  /** Called before every write (typically the memoized setup). */
  ready?: () => Promise<void>;
}

const SUMMARY_EXCLUDES = ['raw'];
const LIST_SORT: estypes.Sort = [{ batch: 'asc' }, { stage: 'asc' }, { line: { order: 'asc', missing: '_first' } }, { id: 'asc' }];

function failure(op: string, err: unknown): SandtrailError {
  return storeFailure(`dead-letter store ${op}`, err);
}

/**
 * Dead letters in `<prefix>-dead-letters`, one document per entry with `_id` = the entry's
 * deterministic id. `put` is an upsert that keeps the first `createdAt`, so re-running a failed
 * batch overwrites its entries instead of duplicating them. Every failure throws: a dead letter
 * that was not stored must not be acknowledged.
 */
export class ElasticsearchDeadLetterStore implements DeadLetterStore {
  readonly index: string;

  constructor(
    private readonly client: Client,
    private readonly o: EsBookkeepingOptions = {},
  ) {
    this.index = esNames(o.prefix).deadLetters;
  }

  /** Writes refresh only when asked to: `list`, `iterate` and `count` refresh first (see refreshForRead). */
  private refresh(): boolean | 'wait_for' {
    return this.o.refresh ?? false;
  }

  async put(entries: readonly DeadLetterInput[]): Promise<void> {
    if (entries.length === 0) return;
    const now = Date.now();
    // the last entry for an id wins, as with the SQLite store's ON CONFLICT
    const byId = new Map<string, DeadLetterInput>();
    for (const e of entries) byId.set(e.id, e);
    const operations: unknown[] = [];
    for (const e of byId.values()) {
      const doc = { ...e, updatedAt: now };
      operations.push({ update: { _index: this.index, _id: e.id, retry_on_conflict: 3 } }, { doc, upsert: { ...doc, createdAt: now } });
    }
    try {
      await this.o.ready?.();
      // 500 entries per request keep bodies bounded when a whole chunk of large documents is dead-lettered
      for (let k = 0; k < operations.length; k += 1000) {
        const r = await this.client.bulk({
          operations: operations.slice(k, k + 1000) as estypes.BulkOperationContainer[],
          refresh: this.refresh(),
        });
        if (r.errors) {
          const bad = r.items.map((it) => Object.values(it)[0]).find((it) => it?.error);
          throw itemFailure('dead-letter store put', this.index, bad as { status?: number; error?: EsErrorCause } | undefined);
        }
      }
    } catch (err) {
      throw failure('put', err);
    }
  }

  async get(id: string): Promise<DeadLetter | null> {
    try {
      const r = await this.client.get<DeadLetter>({ index: this.index, id });
      return r.found && r._source ? r._source : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw failure('get', err);
    }
  }

  async list(opts: DeadLetterFilter & { limit?: number; offset?: number } = {}): Promise<DeadLetterSummary[]> {
    const filter: estypes.QueryDslQueryContainer[] = [];
    if (opts.stage) filter.push({ term: { stage: opts.stage } });
    if (opts.batch) filter.push({ term: { batch: opts.batch } });
    const out: DeadLetterSummary[] = [];
    try {
      await refreshForRead(this.client, this.index);
      for await (const h of scan<DeadLetterSummary>(this.client, {
        index: this.index,
        query: { bool: { filter } },
        sort: LIST_SORT,
        source: { excludes: SUMMARY_EXCLUDES },
        offset: opts.offset ?? 0,
        limit: opts.limit ?? 1000,
        pageSize: 1000,
      })) {
        out.push(h.source);
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw failure('list', err);
    }
    return out;
  }

  async *iterate(pageSize = 500): AsyncIterable<DeadLetter> {
    try {
      await refreshForRead(this.client, this.index);
      for await (const h of scan<DeadLetter>(this.client, { index: this.index, sort: [{ id: 'asc' }], pageSize })) yield h.source;
    } catch (err) {
      if (isIndexNotFound(err)) return;
      throw failure('iterate', err);
    }
  }

  async remove(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    let removed = 0;
    try {
      for (let k = 0; k < ids.length; k += 1000) {
        const r = await this.client.bulk({
          operations: ids.slice(k, k + 1000).map((id) => ({ delete: { _index: this.index, _id: id } })),
          refresh: this.o.refresh ?? true,
        });
        for (const it of r.items) {
          const d = it.delete;
          if (d?.result === 'deleted') removed++;
          else if (d?.error && d.status !== 404)
            throw itemFailure('dead-letter remove', this.index, d as { status?: number; error?: EsErrorCause });
        }
      }
    } catch (err) {
      if (isIndexNotFound(err)) return removed;
      throw failure('remove', err);
    }
    return removed;
  }

  async purge(): Promise<number> {
    try {
      return await deleteMatching(this.client, { index: this.index, query: { match_all: {} }, what: 'dead-letter store purge' });
    } catch (err) {
      if (isIndexNotFound(err)) return 0;
      throw failure('purge', err);
    }
  }

  async count(filter: { stage?: DeadLetterStage; batch?: string; batches?: readonly string[] } = {}): Promise<number> {
    const base: estypes.QueryDslQueryContainer[] = filter.stage ? [{ term: { stage: filter.stage } }] : [];
    if (filter.batch) base.push({ term: { batch: filter.batch } });
    if (filter.batches && filter.batches.length === 0) return 0;
    // `terms` takes at most index.max_terms_count (65 536) values: distinct batches are counted in slices
    const batches = filter.batches ? [...new Set(filter.batches)] : undefined;
    const slices = batches
      ? Array.from({ length: Math.ceil(batches.length / 50_000) }, (_, k) => batches.slice(k * 50_000, (k + 1) * 50_000))
      : [undefined];
    try {
      await refreshForRead(this.client, this.index);
      let n = 0;
      for (const slice of slices) {
        const clauses = slice ? [...base, { terms: { batch: slice } }] : base;
        n += (await this.client.count({ index: this.index, query: { bool: { filter: clauses } } })).count;
      }
      return n;
    } catch (err) {
      if (isIndexNotFound(err)) return 0;
      throw failure('count', err);
    }
  }

  async codes(sinceMs: number): Promise<{ code: string; count: number }[]> {
    try {
      await refreshForRead(this.client, this.index);
      const r = await this.client.search({
        index: this.index,
        size: 0,
        query: { range: { createdAt: { gte: sinceMs, format: 'epoch_millis' } } },
        aggs: { codes: { terms: { field: 'code', size: 100, order: [{ _count: 'desc' }, { _key: 'asc' }] } } },
      });
      const buckets = (r.aggregations?.codes as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
      return (Array.isArray(buckets) ? buckets : []).map((b) => ({ code: String(b.key), count: b.doc_count }));
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw failure('codes', err);
    }
  }
}
