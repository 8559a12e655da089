import { Worker, type Processor } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { createRedis } from './connection.js';

export interface StageRunnerOptions<D, R> {
  queue: string;
  stage: string;
  concurrency: number;
  redisUrl: string;
  config: Config;
  log: Logger;
  processor: Processor<D, R>;
}

/**
 * The BullMQ worker behind a stage, with the lifecycle every stage shares: start once, stop
 * safely twice (drain, or force: active jobs are retried elsewhere once their lock expires),
 * and close the connection BullMQ was handed (it never closes one it did not create).
 */
export class StageRunner<D, R> {
  private worker: Worker<D, R> | undefined;
  private connection: Redis | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly o: StageRunnerOptions<D, R>) {}

  start(): void {
    if (this.worker) return;
    const { config, stage, log } = this.o;
    this.connection = createRedis(this.o.redisUrl);
    this.worker = new Worker<D, R>(this.o.queue, this.o.processor, {
      connection: this.connection,
      prefix: config.queuePrefix,
      concurrency: this.o.concurrency,
      lockDuration: config.worker.lockDurationMs,
      stalledInterval: config.worker.stalledIntervalMs,
      maxStalledCount: config.worker.maxStalledCount,
    });
    this.worker.on('error', (err) => log.error({ stage, err: messageOf(err) }, `${stage} worker error`));
    this.worker.on('failed', (job, err) =>
      log.warn({ stage, job: job?.id, attempts: job?.attemptsMade, err: messageOf(err) }, `${stage} job failed`),
    );
  }

  stop(force = false): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    const release = (): void => this.connection?.disconnect();
    if (force) return worker.close(true).finally(release);
    return (this.stopping ??= worker.close(false).finally(release));
  }
}
