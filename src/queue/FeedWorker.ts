import { setTimeout as sleep } from 'node:timers/promises';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { isRetryable, messageOf } from '../errors/index.js';
import { createSource, processBatch, type FeedSource } from '../feed/index.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import { encodeChunk } from './chunkCodec.js';
import { createRedis } from './connection.js';
import type { Queues } from './createQueues.js';
import { FEED_QUEUE, indexJobId, type FeedJobData, type FeedJobResult } from './names.js';

export interface StageWorkerOptions {
  redisUrl: string;
  config: Config;
  store: Store;
  queues: Queues;
  log: Logger;
}

/**
 * The feed stage behind BullMQ: one job per batch. Chunks become index jobs with deterministic
 * ids; the worker waits while the index queue is above its high-water mark (backpressure).
 */
export class FeedWorker {
  private worker: Worker<FeedJobData, FeedJobResult> | undefined;
  private readonly sources = new Map<string, FeedSource>();
  private stopping: Promise<void> | undefined;
  private connection: Redis | undefined;

  constructor(private readonly o: StageWorkerOptions) {}

  /** Starts consuming; calling it again is a no-op. */
  start(): void {
    if (this.worker) return;
    const { config } = this.o;
    this.worker = new Worker<FeedJobData, FeedJobResult>(FEED_QUEUE, (job, _token, signal) => this.process(job, signal), {
      connection: (this.connection = createRedis(this.o.redisUrl)),
      prefix: config.queuePrefix,
      concurrency: config.feed.concurrency,
      lockDuration: config.worker.lockDurationMs,
      stalledInterval: config.worker.stalledIntervalMs,
      maxStalledCount: config.worker.maxStalledCount,
    });
    this.worker.on('error', (err) => this.o.log.error({ stage: 'feed', err: messageOf(err) }, 'feed worker error'));
    this.worker.on('failed', (job, err) =>
      this.o.log.warn({ stage: 'feed', batch: job?.data.batch, attempts: job?.attemptsMade, err: messageOf(err) }, 'feed job failed'),
    );
  }

  /** Drains (waits for active jobs) or, with force, abandons them to be picked up again; safe to call twice. */
  stop(force = false): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    // BullMQ leaves connections it was handed open: close ours once the worker is done with it.
    const release = (): void => this.connection?.disconnect();
    if (force) return worker.close(true).finally(release);
    return (this.stopping ??= worker.close(false).finally(release));
  }

  private sourceFor(spec: string): FeedSource {
    let s = this.sources.get(spec);
    if (!s) {
      s = createSource(spec, { decoder: this.o.config.feed.decoder, decoderThreads: this.o.config.feed.decoderThreads });
      this.sources.set(spec, s);
    }
    return s;
  }

  private async process(job: Job<FeedJobData, FeedJobResult>, signal?: AbortSignal): Promise<FeedJobResult> {
    const { batch, source: spec } = job.data;
    const { config, store, queues } = this.o;
    const log = this.o.log.child({ stage: 'feed', batch, job: job.id });
    const startedAt = Date.now();
    try {
      const outcome = await processBatch({
        source: this.sourceFor(spec),
        batch,
        maxLineBytes: config.feed.maxLineBytes,
        prefixBytes: config.feed.dlqPrefixBytes,
        chunkMaxDocs: config.index.chunkMaxDocs,
        chunkMaxBytes: config.index.chunkMaxBytes,
        signal,
        log,
        deadLetter: (entries) => store.dlq.put(entries),
        emitChunk: async (n, docs) => {
          await this.waitForRoom(signal);
          const payload = await encodeChunk(docs);
          const jobId = indexJobId(batch, n);
          // A failed job of an earlier run would make this add a no-op: replace it.
          const previous = await queues.index.getJob(jobId);
          if (previous && (await previous.isFailed())) await previous.remove();
          await queues.index.add('chunk', { batch, n, count: docs.length, payload }, { jobId });
        },
      });
      await store.batches.record({ ...outcome, error: null });
      log.info(
        { status: outcome.status, lines: outcome.lines, accepted: outcome.accepted, rejected: outcome.rejected, chunks: outcome.chunks },
        'batch done',
      );
      return { status: outcome.status, chunks: outcome.chunks, accepted: outcome.accepted, rejected: outcome.rejected };
    } catch (err) {
      const final = !isRetryable(err) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (final) {
        // Recorded before the job settles so anyone waiting on the job sees the log entry.
        await store.batches.record({
          batch,
          source: spec,
          status: 'failed',
          lines: 0,
          accepted: 0,
          rejected: 0,
          chunks: 0,
          bytesDecoded: 0,
          error: messageOf(err),
          startedAt,
          finishedAt: Date.now(),
        });
      }
      if (!isRetryable(err)) throw new UnrecoverableError(messageOf(err));
      throw err;
    }
  }

  private async waitForRoom(signal?: AbortSignal): Promise<void> {
    const high = this.o.config.index.highWaterChunks;
    for (let waited = 0; ; waited++) {
      const c = await this.o.queues.index.getJobCounts('waiting', 'prioritized', 'delayed');
      if ((c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0) < high) return;
      if (waited === 0) this.o.log.debug({ stage: 'feed', high }, 'index queue full, pausing');
      if (signal?.aborted) return;
      await sleep(Math.min(50 * (waited + 1), 500));
    }
  }
}
