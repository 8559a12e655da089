import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode, messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { checkRedis, type CheckRedisOptions } from '../queue/index.js';

/** How often a waiting process asks the cluster again. */
const POLL_MS = 2000;

/**
 * checkRedis for a long-running process (a worker, the scheduler): a Redis Cluster that answers
 * but does not serve every slot (a master lost with no replica to take over) is waited for, said
 * once, and the process starts once it serves again, as running workers wait through an outage.
 * Everything else (nothing answers, a typo in the list, refused rights) ends the process at once.
 */
export async function checkRedisOrWait(url: string, o: CheckRedisOptions, log: Logger, pollMs = POLL_MS): Promise<void> {
  let waiting = false;
  // each warning once per node it is about, not once per look while waiting, nor again when the
  // cluster's view of that node changes (pfail, then fail) while the process waits
  const warned = new Set<string>();
  const onWarning = (m: string, about?: string): void => {
    if (!warned.has(about ?? m)) log.warn(m);
    warned.add(about ?? m);
  };
  for (;;) {
    try {
      await checkRedis(url, { ...o, onWarning });
      if (waiting) log.info('the Redis Cluster serves every slot again: starting');
      return;
    } catch (err) {
      const state = (err as { details?: { clusterState?: unknown } }).details?.clusterState;
      if (errorCode(err) !== 'REDIS_UNAVAILABLE' || typeof state !== 'string') throw err;
      if (!waiting)
        log.warn(
          { err: messageOf(err) },
          'the Redis Cluster is not serving: waiting for it (this process starts once every slot is served)',
        );
      waiting = true;
      await sleep(pollMs);
    }
  }
}
