import type { Config } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { openStore } from '../store/index.js';
import { createQueues } from './createQueues.js';
import type { StageWorkerOptions } from './FeedWorker.js';
import { closeQueues, superviseWorkers, type StageKind, type StageWorker } from './superviseWorkers.js';

export type WorkerKind = 'feed' | 'index' | 'all' | 'none';

/** What other capabilities add to a worker process (they build on the queue, so they are handed in). */
export interface WorkerExtras {
  /** Further workers to run in the process (lookups, artefact downloads). */
  producers?: (o: StageWorkerOptions) => StageWorker[];
  /** The feed stage's per-document hook (artefact downloads from feed links). */
  onFeedDoc?: (o: Omit<StageWorkerOptions, 'onFatal'>) => StageWorkerOptions['onFeedDoc'];
}

/**
 * Runs stage workers as a long-lived process against a shared Redis, with the shared lifecycle
 * (superviseWorkers): first SIGTERM/SIGINT drains, second forces. Resolves true when the stop
 * was forced (the process then exits non-zero).
 */
export async function runWorkerProcess(kind: WorkerKind, config: Config, log: Logger, extras: WorkerExtras = {}): Promise<boolean> {
  if (!config.redisUrl) {
    throw new SandtrailError('USAGE', 'workers share a Redis: set REDIS_URL (or SANDTRAIL_REDIS_URL, --redis-url)');
  }
  const store = openStore(config.store, config);
  const queues = createQueues(config.redisUrl, config, log);
  const stages: StageKind[] = kind === 'all' ? ['feed', 'index'] : kind === 'none' ? [] : [kind];
  log.info({ kind, sink: store.spec, prefix: config.queuePrefix }, 'worker started');
  const opts = { redisUrl: config.redisUrl, config, store, queues, log };
  const out = await superviseWorkers({
    ...opts,
    stages,
    producers: (onFatal) => extras.producers?.({ ...opts, onFatal }) ?? [],
    onFeedDoc: extras.onFeedDoc?.(opts),
  });
  await closeQueues(queues, log);
  await store.close();
  log.info({ forced: out.forced }, 'worker stopped');
  if (out.fatal) throw out.fatal;
  return out.forced;
}
