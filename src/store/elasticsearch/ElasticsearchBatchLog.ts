import type { Client } from '@elastic/elasticsearch';

import type { SandtrailError } from '../../errors/index.js';
import { storeFailure, isIndexNotFound } from './classify.js';
import type { EsBookkeepingOptions } from './ElasticsearchDeadLetterStore.js';
import { esNames } from './names.js';
import { refreshForRead } from './refreshForRead.js';
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

/** A chunk's mark: stored (with the documents it wrote) or failed (with why). */
interface ChunkMark {
  batch: string;
  chunk: number;
  records?: number;
  error?: string;
}

/** `_id` of the mark saying chunk n of a batch is stored, or failed. */
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
      const settled = entry.status === 'ok' && entry.chunks > 0 ? await this.settled(entry) : entry;
      await this.client.index({
        index: this.index,
        id: entry.batch,
        document: withLag(settled),
        ...(this.o.refresh !== undefined ? { refresh: this.o.refresh } : {}),
      });
    } catch (err) {
      throw failure('record', err);
    }
  }

  async chunkStored(batch: MinuteId, n: number, records?: number): Promise<void> {
    await this.mark(batch, n, { batch, chunk: n, ...(records === undefined ? {} : { records }) }, 'chunkStored');
  }

  async chunkFailed(batch: MinuteId, n: number, reason: string): Promise<void> {
    // this try's failure stands even over a mark of an earlier run: the store did not take it now
    await this.mark(batch, n, { batch, chunk: n, error: reason }, 'chunkFailed');
  }

  /**
   * Writes a chunk mark, then settles the batch's entry from its marks. Two writers can race here
   * and leave a stale status; reads settle entries from the marks again, so they still answer right.
   */
  private async mark(batch: MinuteId, n: number, mark: ChunkMark, op: string): Promise<void> {
    try {
      await this.o.ready?.();
      await this.client.index({ index: this.index, id: chunkId(batch, n), document: mark });
      const r = await this.client.get<BatchLogEntry>({ index: this.index, id: batch, _source_excludes: DERIVED }).catch(() => null);
      const e = r?.found ? r._source : undefined;
      // a stored chunk changes nothing of an entry already ok: no read of every mark per chunk
      if (!e || e.chunks === 0 || (e.status === 'ok' && !mark.error)) return;
      const s = await this.settled(e);
      if (s.status !== e.status || s.error !== e.error) {
        await this.client.update({
          index: this.index,
          id: batch,
          doc: { status: s.status, error: s.error },
          // the chunks' index workers settle the entry side by side: an update meeting another's
          // is done again on the newer entry (each writes what every mark now says)
          retry_on_conflict: 10,
          ...(this.o.refresh !== undefined ? { refresh: this.o.refresh } : {}),
        });
      }
    } catch (err) {
      throw failure(op, err);
    }
  }

  /** The marks of chunks 0..below-1 of a batch (mget is real-time: a mark is seen at once, whatever the refresh interval). */
  private async marks(batch: MinuteId, below: number): Promise<ChunkMark[]> {
    const out: ChunkMark[] = [];
    try {
      for (let k = 0; k < below; k += 1000) {
        const ids = Array.from({ length: Math.min(1000, below - k) }, (_, i) => chunkId(batch, k + i));
        const r = await this.client.mget<ChunkMark>({ index: this.index, ids });
        for (const d of r.docs) if ('found' in d && d.found && d._source) out.push(d._source);
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw failure('storedChunks', err);
    }
    return out.sort((a, b) => a.chunk - b.chunk);
  }

  async storedChunks(batch: MinuteId, below: number): Promise<number[]> {
    return (await this.marks(batch, below)).filter((m) => !m.error).map((m) => m.chunk);
  }

  async storedRecords(batch: MinuteId, below: number): Promise<number> {
    return (await this.marks(batch, below)).reduce((sum, m) => sum + (m.error ? 0 : (m.records ?? 0)), 0);
  }

  /** A feed-finished entry with its status from its chunk marks: failed (first failed chunk's reason), ok, or pending. */
  private async settled(e: BatchLogEntry): Promise<BatchLogEntry> {
    const marks = await this.marks(e.batch, e.chunks);
    const failed = marks.find((m) => m.error);
    if (failed) return { ...e, status: 'failed', error: failed.error ?? null };
    return { ...e, status: marks.length >= e.chunks ? 'ok' : 'pending', error: null };
  }

  /** Entries of batches with chunks, settled from their marks (a lost race in mark). */
  private async settle(entries: BatchLogEntry[]): Promise<BatchLogEntry[]> {
    const out: BatchLogEntry[] = [];
    for (const e of entries) out.push(e.chunks > 0 && (e.status === 'pending' || e.status === 'failed') ? await this.settled(e) : e);
    return out;
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
    return this.entries('recent', limit, [], [{ finishedAt: 'desc' }, { batch: 'desc' }]);
  }

  async minutes(limit: number): Promise<BatchLogEntry[]> {
    // feed minutes are the ids made of digits (lookup-… sort after them)
    return this.entries('minutes', limit, [{ range: { batch: { gte: '000000000000', lte: '999999999999' } } }], [{ batch: 'desc' }]);
  }

  /** The first `limit` batch entries matching `filter` in `sort` order, settled. */
  private async entries(
    op: string,
    limit: number,
    filter: Record<string, unknown>[],
    sort: Record<string, 'asc' | 'desc'>[],
  ): Promise<BatchLogEntry[]> {
    if (!(limit > 0)) return [];
    const out: BatchLogEntry[] = [];
    try {
      await refreshForRead(this.client, this.index);
      for await (const h of scan<BatchLogEntry>(this.client, {
        index: this.index,
        // chunk marks share the index; only batch entries have a status
        query: { bool: { filter: [{ exists: { field: 'status' } }, ...filter] } },
        sort,
        limit,
        pageSize: Math.min(limit, 1000),
        source: { excludes: DERIVED },
      })) {
        out.push(h.source);
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw failure(op, err);
    }
    return this.settle(out);
  }
}
