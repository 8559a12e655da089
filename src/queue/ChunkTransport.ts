import type { SinkDoc } from '../wire/index.js';

/**
 * How a producer of documents (a feed batch, a lookup) hands chunks to the index stage. Two
 * implementations, one contract:
 * - `redis` ({@link RedisChunkTransport}): each chunk an index job any index worker of the fleet
 *   takes; the queue tracks it, so `settle` has nothing to wait for.
 * - `memory` ({@link MemoryChunkTransport}): straight to the index stage of this process (its
 *   worker thread), no compression, no Redis round trip; `settle` waits for the commits, so the
 *   producer's job completes only once its chunks are stored.
 */
export interface ChunkTransport {
  readonly kind: 'redis' | 'memory';
  /**
   * Says a producer starts reading a batch. Until it ends (the returned function, idempotent: call
   * it once every chunk is handed over, before `settle`, and again on any way out), a batch that
   * settles meanwhile may wait for that producer's chunks, to be committed with them.
   */
  begin(): Promise<() => void>;
  /** Hands chunk `n` of `batch` over; resolves once it is accepted (it waits while the index stage is behind). */
  emit(batch: string, n: number, docs: readonly SinkDoc[], signal?: AbortSignal): Promise<void>;
  /**
   * Resolves once every chunk of `batch` handed over so far is stored (written or dead-lettered,
   * marked in the batch log); rejects with the store's error when one could not be, so the
   * producer's job fails and is tried again. At once for a transport whose chunks are jobs.
   */
  settle(batch: string): Promise<void>;
}
