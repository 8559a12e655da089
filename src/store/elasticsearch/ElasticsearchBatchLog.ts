import type { Client } from '@elastic/elasticsearch';

import type { SandtrailError } from '../../errors/index.js';
import { storeFailure, isIndexNotFound } from './classify.js';
import type { EsBookkeepingOptions } from './ElasticsearchDeadLetterStore.js';
import { esNames } from './names.js';
import { scan } from './scan.js';
import { minuteToMs, type MinuteId } from '../../minute/index.js';
import type { BatchLog, BatchLogEntry } from '../BatchLog.js';

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

/** `_id` of the mark saying chunk n of a batch is stored. */
const chunkId = (batch: MinuteId, n: number): string => `${batch}.chunk.${n}`;

/**
 * Batch log in `<prefix>-batches`: one document per feed minute, `_id` = the minute, overwritten
 * by re-runs, plus one small mark per stored chunk (`_id` = `<minute>.chunk.<n>`).
 */
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
      let status = entry.status;
      if (status === 'ok' && entry.chunks > 0 && (await this.storedChunks(entry.batch, entry.chunks)).length < entry.chunks)
        status = 'pending';
      await this.client.index({
        index: this.index,
        id: entry.batch,
        document: withLag({ ...entry, status }),
        refresh: this.o.refresh ?? 'wait_for',
      });
    } catch (err) {
      throw failure('record', err);
    }
  }

  async chunkStored(batch: MinuteId, n: number): Promise<void> {
    try {
      await this.o.ready?.();
      await this.client.index({ index: this.index, id: chunkId(batch, n), document: { batch, chunk: n } });
      // Flip the entry to ok when this was its last chunk. Two writers can race here and both
      // leave `pending`; reads derive the status from the marks, so they still answer `ok`.
      const r = await this.client.get<BatchLogEntry>({ index: this.index, id: batch, _source_excludes: DERIVED }).catch(() => null);
      const e = r?.found ? r._source : undefined;
      if (e?.status === 'pending' && (await this.storedChunks(batch, e.chunks)).length >= e.chunks) {
        await this.client.update({ index: this.index, id: batch, doc: { status: 'ok' }, refresh: this.o.refresh ?? 'wait_for' });
      }
    } catch (err) {
      throw failure('chunkStored', err);
    }
  }

  async storedChunks(batch: MinuteId, below: number): Promise<number[]> {
    const out: number[] = [];
    try {
      for (let k = 0; k < below; k += 1000) {
        const ids = Array.from({ length: Math.min(1000, below - k) }, (_, i) => chunkId(batch, k + i));
        // mget is real-time: a mark is seen at once, whatever the refresh interval
        const r = await this.client.mget<{ chunk: number }>({ index: this.index, ids });
        for (const d of r.docs) if ('found' in d && d.found && d._source) out.push(d._source.chunk);
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw failure('storedChunks', err);
    }
    return out.sort((a, b) => a - b);
  }

  /** Entries still `pending` whose marks are all in read `ok` (a lost race in chunkStored). */
  private async settle(entries: BatchLogEntry[]): Promise<BatchLogEntry[]> {
    for (const e of entries) {
      if (e.status === 'pending' && (await this.storedChunks(e.batch, e.chunks)).length >= e.chunks) e.status = 'ok';
    }
    return entries;
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
    return this.settle(out.sort((a, b) => (a.batch < b.batch ? -1 : a.batch > b.batch ? 1 : 0)));
  }

  async recent(limit: number): Promise<BatchLogEntry[]> {
    if (!(limit > 0)) return [];
    const out: BatchLogEntry[] = [];
    try {
      for await (const h of scan<BatchLogEntry>(this.client, {
        index: this.index,
        // chunk marks share the index; only batch entries have a status
        query: { bool: { filter: [{ exists: { field: 'status' } }] } },
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
    return this.settle(out);
  }
}
