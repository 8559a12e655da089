import type { Client, estypes } from '@elastic/elasticsearch';
import { emptyPruneReport, type PruneOptions, type PruneReport, type Retention } from '../Retention.js';
import { isIndexNotFound, isNotFound, readFailure, storeFailure } from './classify.js';
import { deleteMatching } from './deleteMatching.js';
import { esNames, type EsNames } from './names.js';
import { dayOfIndex } from './partitions.js';
import { refreshForRead } from './refreshForRead.js';

export interface EsRetentionOptions {
  prefix?: string;
  /** Called after day indices were deleted (the sink forgets its list of partitions). */
  onPartitionsDeleted?: () => void;
}

const DAY_SEC = 86_400;
/**
 * An expired day index holding more than this many steps' worth of documents is deleted whole
 * even by a bounded call: removing millions of documents one step at a time would cost as much
 * as writing them, while deleting the index is one cheap request.
 */
const WHOLE_INDEX_STEPS = 10;
type Query = estypes.QueryDslQueryContainer;

/** Bookkeeping stores by when their records were written (epoch-millisecond fields). */
const BOOKKEEPING = [
  ['deadLetters', 'deadLetters', 'createdAt'],
  ['watchHits', 'watchHits', 'at'],
  ['artefacts', 'artefacts', 'fetched_at'],
] as const satisfies readonly (readonly [keyof PruneReport, keyof EsNames, string])[];

/**
 * Retention of the Elasticsearch store on demand: a behaviour day index goes whole once its whole day is before `behavioursBefore` (one request
 * however many documents), the undated partition loses its behaviours dated before the cutoff
 * by delete_by_query, and the bookkeeping indices their records written before
 * `bookkeepingBefore`. With `maxRows` a call removes at most that many documents by
 * delete_by_query: a day index holding a few steps' worth is thinned first and deleted at a later
 * call, a larger one is deleted whole at once (its documents counted in `behaviours`, which then
 * exceeds `maxRows` for that call). ILM's delete phase does the same on its own schedule.
 */
export class ElasticsearchRetention implements Retention {
  readonly names: EsNames;

  constructor(
    private readonly client: Client,
    private readonly o: EsRetentionOptions = {},
  ) {
    this.names = esNames(o.prefix);
  }

  async prune(o: PruneOptions): Promise<PruneReport> {
    const report = emptyPruneReport();
    const max = o.maxRows === undefined ? Infinity : Math.max(0, Math.floor(o.maxRows));
    const step: Step = { left: max, max, dryRun: o.dryRun === true };
    try {
      if (o.behavioursBefore !== undefined) await this.behaviours(o.behavioursBefore, step, report);
      if (o.bookkeepingBefore !== undefined) {
        const ms = o.bookkeepingBefore * 1000;
        // dead letters and batch-log rows are written without a refresh: what the counts below must see
        for (const index of [this.names.batches, this.names.deadLetters]) await refreshForRead(this.client, index);
        report.batches = await this.batches(ms, step, report);
        for (const [key, index, field] of BOOKKEEPING) {
          const n = await this.byQuery(this.names[index], { range: { [field]: { lt: ms, format: 'epoch_millis' } } }, step, report);
          report[key] = n;
        }
        // shared collection objects: added at epoch microseconds (a long, not a date)
        report.sharedObjects = await this.byQuery(this.names.collectionObjects, { range: { date_added: { lt: ms * 1000 } } }, step, report);
      }
    } catch (err) {
      throw storeFailure('Elasticsearch retention', err);
    }
    if (report.partitions.length > 0 && !step.dryRun) this.o.onPartitionsDeleted?.();
    return report;
  }

  async oldest(): Promise<number | null> {
    return this.edge('asc');
  }

  async newest(): Promise<number | null> {
    return this.edge('desc');
  }

  /** The first last_modification_date in this order. */
  private async edge(order: 'asc' | 'desc'): Promise<number | null> {
    try {
      const r = await this.client.search<{ last_modification_date?: unknown }>({
        index: this.names.alias,
        size: 1,
        sort: [{ last_modification_date: { order } }],
        _source: ['last_modification_date'],
        track_total_hits: false,
      });
      const v = r.hits.hits[0]?._source?.last_modification_date;
      return typeof v === 'number' ? v : null;
    } catch (err) {
      if (isIndexNotFound(err)) return null;
      throw readFailure(`Elasticsearch retention ${order === 'asc' ? 'oldest' : 'newest'}`, err);
    }
  }

  /** Day indices wholly before the cutoff go (oldest first); the undated partition loses what is dated before it. */
  private async behaviours(before: number, step: Step, report: PruneReport): Promise<void> {
    const indices = await this.partitions();
    const expired = indices
      .map((index) => ({ index, day: dayOfIndex(this.names, index) }))
      .filter((p): p is { index: string; day: number } => p.day !== undefined && p.day + DAY_SEC <= before)
      .sort((a, b) => a.day - b.day);
    for (const [k, { index }] of expired.entries()) {
      const docs = await this.count(index, { match_all: {} });
      // a few steps' worth is thinned within the bound; more goes whole, as a call of its own
      const whole = docs <= step.left || (docs > step.left * WHOLE_INDEX_STEPS && step.left === step.max && step.max > 0);
      if (!whole) {
        report.behaviours += await this.byQuery(index, { match_all: {} }, step, report);
        return;
      }
      if (!step.dryRun) await this.client.indices.delete({ index }, { ignore: [404] });
      report.partitions.push(index);
      report.behaviours += docs;
      if (docs <= step.left) {
        step.left -= docs;
        continue;
      }
      step.left = 0;
      if (k < expired.length - 1 || (await this.undatedExpired(indices, before))) report.done = false;
      return;
    }
    for (const index of indices.filter((i) => dayOfIndex(this.names, i) === undefined)) {
      report.behaviours += await this.byQuery(index, datedBefore(before), step, report);
    }
    await this.locatorEntries(before, step, report);
  }

  /**
   * Locator entries whose every partition is gone: the newest day they record is before the
   * cutoff and before the oldest day index left (ILM may not have deleted an expired day yet, and
   * a copy there must stay findable). Bounded by the step as behaviours are; not counted as them.
   */
  private async locatorEntries(before: number, step: Step, report: PruneReport): Promise<void> {
    const days = (await this.partitions()).map((i) => dayOfIndex(this.names, i)).filter((d): d is number => d !== undefined);
    const bound = Math.min(Math.floor(before / DAY_SEC) * DAY_SEC, ...days);
    await this.byQuery(this.names.locator, { range: { last_day: { lt: bound } } }, step, report);
  }

  /** True when the undated partitions still hold behaviours dated before the cutoff. */
  private async undatedExpired(indices: readonly string[], before: number): Promise<boolean> {
    for (const index of indices.filter((i) => dayOfIndex(this.names, i) === undefined)) {
      if ((await this.count(index, datedBefore(before))) > 0) return true;
    }
    return false;
  }

  /** Batch entries finished before the cutoff, with their chunk marks (counted as their entry). */
  private async batches(ms: number, step: Step, report: PruneReport): Promise<number> {
    const index = this.names.batches;
    const finished: Query = { range: { finishedAt: { lt: ms, format: 'epoch_millis' } } };
    const total = await this.count(index, finished);
    const take = Math.min(total, step.left, 10_000);
    if (total > take) report.done = false;
    if (take === 0 || step.dryRun) {
      step.left -= take;
      return take;
    }
    const r = await this.client.search<{ batch: string }>({
      index,
      query: finished,
      size: take,
      sort: [{ batch: 'asc' }],
      _source: ['batch'],
    });
    const batches = r.hits.hits.flatMap((h) => (h._source ? [h._source.batch] : []));
    if (batches.length === 0) return 0;
    await deleteMatching(this.client, { index, query: { terms: { batch: batches } }, what: 'retention of the batch log' });
    step.left -= batches.length;
    return batches.length;
  }

  /** Removes (or counts) at most `step.left` documents of `index` matching `query`; marks the report not done when more remain. */
  private async byQuery(index: string, query: Query, step: Step, report: PruneReport): Promise<number> {
    const total = await this.count(index, query);
    const take = Math.min(total, step.left);
    if (total > take) report.done = false;
    if (take === 0) return 0;
    let removed = take;
    if (!step.dryRun) {
      try {
        removed = await deleteMatching(this.client, {
          index,
          query,
          ...(Number.isFinite(take) && take < total ? { maxDocs: take } : {}),
          what: `retention of ${index}`,
        });
      } catch (err) {
        // ILM deleted the day index meanwhile: nothing left to remove
        if (!isIndexNotFound(err)) throw err;
        removed = 0;
      }
    }
    step.left -= removed;
    return removed;
  }

  private async count(index: string, query: Query): Promise<number> {
    try {
      return (await this.client.count({ index, query })).count;
    } catch (err) {
      if (isIndexNotFound(err)) return 0;
      throw err;
    }
  }

  /** The concrete indices behind the behaviours alias (none without the alias). */
  private async partitions(): Promise<string[]> {
    try {
      return Object.keys(await this.client.indices.getAlias({ name: this.names.alias }));
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
  }
}

/** Behaviours last modified before `before` (Unix seconds). */
function datedBefore(before: number): Query {
  return { range: { last_modification_date: { lt: before, format: 'epoch_second' } } };
}

interface Step {
  /** Documents this call may still remove. */
  left: number;
  /** Documents this call may remove in all (`maxRows`). */
  max: number;
  dryRun: boolean;
}
