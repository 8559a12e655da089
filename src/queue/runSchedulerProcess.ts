import type { Config } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import { createSource } from '../feed/index.js';
import type { Logger } from '../log/index.js';
import { openStore } from '../store/index.js';
import { createQueues } from './createQueues.js';
import type { FeedCursor } from './cursor.js';
import { Scheduler } from './Scheduler.js';

/**
 * Runs the live scheduler alone, for a fleet whose feed and index workers run as separate
 * processes. One scheduler per pipeline (queue prefix); stops on the first SIGTERM/SIGINT.
 */
export async function runSchedulerProcess(config: Config, log: Logger, o: { sourceSpec: string; start?: FeedCursor }): Promise<void> {
  if (!config.redisUrl) throw new SandtrailError('USAGE', 'the scheduler shares Redis with the workers: set REDIS_URL');
  const store = openStore(config.sink, config);
  const queues = createQueues(config.redisUrl, config);
  const scheduler = new Scheduler({
    queues,
    store,
    prefix: config.queuePrefix,
    sourceSpec: o.sourceSpec === 'api' ? 'api' : createSource(o.sourceSpec).spec,
    log,
    lagMs: config.live.lagMinutes * 60_000,
    tickMs: config.live.tickMs,
    start: o.start,
  });
  await scheduler.start();
  log.info({ source: o.sourceSpec, lagMinutes: config.live.lagMinutes }, 'scheduler started');
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  await scheduler.stop();
  await queues.close();
  await store.close();
  log.info('scheduler stopped');
}
