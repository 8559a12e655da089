import type { Logger } from '../log/index.js';
import type { Queues } from '../queue/index.js';
import type { Store } from '../store/index.js';
import type { ProcessOps } from './processOps.js';
import { closeQueues } from './superviseWorkers.js';

/** What a long-lived process closes once its workers have stopped. */
export interface ClosingParts {
  log: Logger;
  /** How the workers stopped: drained (false), forced (true), or never started (undefined). */
  forced: boolean | undefined;
  ops?: ProcessOps | undefined;
  queues: Queues;
  store: Store;
  /** A private redis-server the process started for itself. */
  redis?: { stop(): Promise<void> } | undefined;
}

/**
 * Closes a long-lived process's parts in order, each step logged, so an operator reading the log
 * of a shutdown sees where it ended (docs/operations.md: the HTTP server, the Redis connections,
 * the store).
 */
export async function closeProcess(p: ClosingParts): Promise<void> {
  p.log.info({ forced: p.forced ?? true }, p.forced === false ? 'workers drained' : 'workers stopped');
  await p.ops?.close();
  await closeQueues(p.queues, p.log);
  await p.redis?.stop();
  p.log.info('Redis connections closed');
  await p.store.close();
  p.log.info({ store: p.store.spec }, 'store closed');
}
