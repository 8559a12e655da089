import type { Config } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { openStore } from '../store/index.js';
import { createQueues, type StageWorkerOptions } from '../queue/index.js';
import { startProcessOps, type ProcessOps } from './processOps.js';
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
  const started = Date.now();
  const opts = { redisUrl: config.redisUrl, config, store, queues, log };
  let ops: ProcessOps | undefined;
  let out;
  try {
    ops = await startProcessOps({ config, log, store, queues });
    log.info({ kind, sink: store.spec, prefix: config.queuePrefix, http: ops.url ?? null }, 'worker started');
    out = await superviseWorkers({
      ...opts,
      stages,
      producers: (onFatal) => extras.producers?.({ ...opts, onFatal }) ?? [],
      onFeedDoc: extras.onFeedDoc?.(opts),
      onDraining: () => ops?.draining(),
    });
  } finally {
    // the shutdown reports itself step by step: an operator reading the log sees where it ended
    log.info({ forced: out?.forced ?? true }, out?.forced === false ? 'workers drained' : 'workers stopped');
    await ops?.close();
    await closeQueues(queues, log);
    log.info('Redis connections closed');
    await store.close();
    log.info({ store: store.spec }, 'store closed');
  }
  log.info({ forced: out.forced, ms: Date.now() - started }, 'worker stopped');
  if (out.fatal) throw out.fatal;
  return out.forced;
}
