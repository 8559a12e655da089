import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { SinkDoc } from '../wire/index.js';
import { encodeChunk } from '../wire/index.js';
import type { ChunkTransport } from './ChunkTransport.js';
import type { Queues } from './createQueues.js';
import { CHUNK_TTL_SECONDS, chunkKey, indexJobId } from './names.js';

/**
 * Hands normalized documents to the index stage: one compressed chunk per index job, with a
 * deterministic job id (`idx-<batch>-<n>`), its bytes in a Redis key of their own, and
 * backpressure: it waits while the index queue is above index.highWaterChunks. Shared by every
 * producer of documents (feed batches, lookups, fetches).
 */
export class RedisChunkTransport implements ChunkTransport {
  readonly kind = 'redis';

  /** @param store the identity of the store its producer writes (storeIdentity), carried by each index job. */
  constructor(
    private readonly queues: Queues,
    private readonly config: Config,
    private readonly log: Logger,
    private readonly store?: string,
  ) {}

  /** Queues chunk `n` of `batch`. */
  async emit(batch: string, n: number, docs: readonly SinkDoc[], signal?: AbortSignal): Promise<void> {
    await this.waitForRoom(signal);
    const { payload, rawBytes } = await encodeChunk(docs);
    const jobId = indexJobId(batch, n);
    const payloadKey = chunkKey(this.config.queuePrefix, jobId);
    // the bytes first: a job never exists without its payload (the index worker deletes it when done)
    await this.queues.connection.set(payloadKey, payload, 'EX', CHUNK_TTL_SECONDS);
    // A failed job of an earlier run, or one waiting out a backoff or put aside after a store
    // fault, would make this add a no-op (and wait): replace it with this run's chunk.
    const previous = await this.queues.index.getJob(jobId);
    if (previous && ((await previous.isFailed()) || (await previous.isDelayed()))) await previous.remove();
    const data = {
      batch,
      n,
      count: docs.length,
      payloadKey,
      bytes: payload.length,
      rawBytes,
      ...(this.store ? { store: this.store } : {}),
    };
    await this.queues.index.add('chunk', data, { jobId });
  }

  /** Index jobs are committed by the index workers as they come: nothing waits on a producer. */
  begin(): Promise<() => void> {
    return Promise.resolve(() => undefined);
  }

  /** Index jobs are tracked by their queue (and the batch log's chunk marks): nothing to wait for here. */
  settle(): Promise<void> {
    return Promise.resolve();
  }

  private async waitForRoom(signal?: AbortSignal): Promise<void> {
    const high = this.config.index.highWaterChunks;
    for (let waited = 0; ; waited++) {
      const c = await this.queues.index.getJobCounts('waiting', 'prioritized', 'delayed');
      if ((c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0) < high) return;
      if (waited === 0) this.log.debug({ high }, 'index queue full, pausing');
      if (signal?.aborted) return;
      await sleep(Math.min(50 * (waited + 1), 500));
    }
  }
}
