import type { Config } from '../config/index.js';
import { SandtrailError, errorCode, messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { openStore } from '../store/index.js';
import { createQueues } from '../queue/index.js';
import { checkRedisOrWait } from './checkRedisOrWait.js';
import { startProcessOps, type ProcessOps } from './processOps.js';
import type { ProcessKind } from './processKinds.js';
import { closeProcess } from './closeProcess.js';
import { superviseWorkers } from './superviseWorkers.js';

/** The worker processes of a fleet (`sandtrail worker feed|index|lookup|artefacts`). */
export type WorkerKind = Extract<ProcessKind, `worker ${string}`>;

/**
 * Runs stage workers as a long-lived process against a shared Redis, with the shared lifecycle
 * (superviseWorkers): first SIGTERM/SIGINT drains, second forces. Resolves true when the stop
 * was forced (the process then exits non-zero).
 */
export async function runWorkerProcess(kind: WorkerKind, config: Config, log: Logger): Promise<boolean> {
  if (!config.redisUrl) {
    throw new SandtrailError('USAGE', 'workers share a Redis: set REDIS_URL (or SANDTRAIL_REDIS_URL, --redis-url)');
  }
  // every job of these workers calls the API: without a key each would fail, one by one
  if ((kind === 'worker lookup' || kind === 'worker artefacts') && !config.gti.apiKey) {
    throw new SandtrailError('USAGE', `${kind} calls the GTI API for every job: set GTI_APIKEY (or SANDTRAIL_GTI_API_KEY)`);
  }
  // unreachable, or an ACL user without the rights the workers need: one line now, not retries
  await checkRedisOrWait(config.redisUrl, { redisCluster: config.redisCluster, prefix: config.queuePrefix }, log);
  const store = openStore(config.store, config);
  try {
    await store.checkLayout?.();
  } catch (err) {
    // a layout the cluster cannot hold is a setting to fix; a store that is down is waited for, as before
    if (errorCode(err) === 'CONFIG_INVALID') {
      await store.close();
      throw err;
    }
    log.warn({ err: errorCode(err) }, `cannot check the store's layout now: ${messageOf(err)}`);
  }
  const queues = createQueues(config.redisUrl, config, log);
  const started = Date.now();
  const opts = { redisUrl: config.redisUrl, config, store, queues, log };
  let ops: ProcessOps | undefined;
  let out;
  try {
    ops = await startProcessOps({ config, log, store, queues });
    log.info({ kind, sink: store.spec, prefix: config.queuePrefix, http: ops.url ?? null }, 'worker started');
    out = await superviseWorkers({ ...opts, kind, onDraining: () => ops?.draining() });
  } finally {
    await closeProcess({ log, forced: out?.forced, ops, queues, store });
  }
  log.info({ forced: out.forced, ms: Date.now() - started }, 'worker stopped');
  if (out.fatal) throw out.fatal;
  return out.forced;
}
