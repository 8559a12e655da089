import type { Client } from '@elastic/elasticsearch';
import { minuteToMs, type BatchLog, type BatchLogEntry, type MinuteId } from '../../feed/index.js';

import type { SandtrailError } from '../../errors/index.js';
import { storeFailure, isIndexNotFound } from './classify.js';
import type { EsBookkeepingOptions } from './ElasticsearchDeadLetterStore.js';
import { esNames } from './names.js';
import { scan } from './scan.js';

function failure(op: string, err: unknown): SandtrailError {
  return storeFailure(`batch log ${op}`, err);
}

/** Fields added for the dashboard's ingestion-lag panel; stripped on read. */
const DERIVED = ['@timestamp', 'lag_seconds'];

/** The stored form: the entry plus the minute's start and its ingestion lag (seconds after the minute ended). */
function withLag(entry: BatchLogEntry): Record<string, unknown> {
  const minuteStart = minuteToMs(entry.batch);
  return { ...entry, '@timestamp': minuteStart, lag_seconds: Math.round((entry.finishedAt - minuteStart - 60_000) / 1000) };
}

/** Batch log in `<prefix>-batches`: one document per feed minute, `_id` = the minute, overwritten by re-runs. */
export class ElasticsearchBatchLog implements BatchLog {
  readonly index: string;

  constructor(
    private readonly client: Client,
    private readonly o: EsBookkeepingOptions = {},
  ) {
    this.index = esNames(o.prefix).batches;
  }

  async record(entry: BatchLogEntry): Promise<void> {
    try {
      await this.o.ready?.();
      await this.client.index({ index: this.index, id: entry.batch, document: withLag(entry), refresh: this.o.refresh ?? 'wait_for' });
    } catch (err) {
      throw failure('record', err);
    }
  }

  async get(batches: readonly MinuteId[]): Promise<BatchLogEntry[]> {
    if (batches.length === 0) return [];
    const out: BatchLogEntry[] = [];
    try {
      const unique = [...new Set(batches)];
      for (let k = 0; k < unique.length; k += 1000) {
        const r = await this.client.mget<BatchLogEntry>({ index: this.index, ids: unique.slice(k, k + 1000), _source_excludes: DERIVED });
        for (const d of r.docs) if ('found' in d && d.found && d._source) out.push(d._source);
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw failure('get', err);
    }
    return out.sort((a, b) => (a.batch < b.batch ? -1 : a.batch > b.batch ? 1 : 0));
  }

  async recent(limit: number): Promise<BatchLogEntry[]> {
    if (!(limit > 0)) return [];
    const out: BatchLogEntry[] = [];
    try {
      for await (const h of scan<BatchLogEntry>(this.client, {
        index: this.index,
        sort: [{ finishedAt: 'desc' }, { batch: 'desc' }],
        limit,
        pageSize: Math.min(limit, 1000),
        source: { excludes: DERIVED },
      })) {
        out.push(h.source);
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw failure('recent', err);
    }
    return out;
  }
}
