import type { Config } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import { createSource } from '../feed/index.js';
import type { Logger } from '../log/index.js';
import { openStore } from '../store/index.js';
import { createQueues, type FeedCursor, type ArtefactChoice, Scheduler } from '../queue/index.js';
import { checkRedisOrWait } from './checkRedisOrWait.js';
import { startProcessOps } from './processOps.js';
import { closeProcess } from './closeProcess.js';
import { closeQueues, superviseWorkers } from './superviseWorkers.js';

/**
 * Runs the live scheduler alone, for a fleet whose feed and index workers run as separate
 * processes. One scheduler per pipeline (queue prefix); the first SIGTERM/SIGINT stops it, with
 * the lifecycle of every long-running process (superviseWorkers). Resolves true when forced.
 */
export async function runSchedulerProcess(
  config: Config,
  log: Logger,
  o: { sourceSpec: string; start?: FeedCursor; artefacts?: ArtefactChoice },
): Promise<boolean> {
  if (!config.redisUrl) throw new SandtrailError('USAGE', 'the scheduler shares Redis with the workers: set REDIS_URL');
  // parsed before anything is opened: a bad --source ends the process at once, holding nothing
  const sourceSpec = o.sourceSpec === 'api' ? 'api' : createSource(o.sourceSpec).spec;
  await checkRedisOrWait(config.redisUrl, { redisCluster: config.redisCluster, prefix: config.queuePrefix }, log);
  const store = openStore(config.store, config);
  const queues = createQueues(config.redisUrl, config, log);
  const scheduler = new Scheduler({
    queues,
    store,
    prefix: config.queuePrefix,
    sourceSpec,
    log,
    lagMs: config.live.lagMinutes * 60_000,
    tickMs: config.live.tickMs,
    retryFailedMs: config.live.retryFailedMs,
    start: o.start,
    artefacts: o.artefacts,
  });
  const ops = await startProcessOps({ config, log, store, queues }).catch(async (err: unknown) => {
    await closeQueues(queues, log);
    await store.close();
    throw err;
  });
  log.info({ source: o.sourceSpec, lagMinutes: config.live.lagMinutes, http: ops.url ?? null }, 'scheduler started');
  const out = await superviseWorkers({
    redisUrl: config.redisUrl,
    config,
    store,
    queues,
    log,
    kind: 'scheduler',
    scheduler,
    onDraining: () => ops.draining(),
  });
  await closeProcess({ log, forced: out.forced, ops, queues, store });
  log.info({ forced: out.forced }, 'scheduler stopped');
  return out.forced;
}
