import type { Job } from 'bullmq';
import { StageRunner } from './StageRunner.js';
import type { StageWorker, StageWorkerOptions } from './StageWorker.js';

/**
 * A stage worker on one BullMQ queue with the shared lifecycle (StageRunner): start once, stop
 * (drain, or force) safely twice, refused credentials fatal for the process. Subclasses only say
 * what one job does.
 */
export abstract class QueueWorker<D, R> implements StageWorker {
  private readonly runner: StageRunner<D, R>;

  protected constructor(
    protected readonly o: StageWorkerOptions,
    queue: string,
    stage: string,
    concurrency: number,
  ) {
    this.runner = new StageRunner<D, R>({
      queue,
      stage,
      concurrency,
      redisUrl: o.redisUrl,
      config: o.config,
      log: o.log,
      processor: (job, token, signal) => this.process(job, token, signal),
      onFatal: o.onFatal,
      onSettled: o.onSettled,
    });
  }

  /** Starts consuming; calling it again is a no-op. */
  start(): void {
    this.runner.start();
  }

  /** Drains (waits for active jobs) or, with force, abandons them to be picked up again; safe to call twice. */
  stop(force = false): Promise<void> {
    return this.runner.stop(force);
  }

  /** What one job does. */
  protected abstract process(job: Job<D, R>, token: string | undefined, signal: AbortSignal | undefined): Promise<R>;
}
