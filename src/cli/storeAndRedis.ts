import { ensureRedis, type RedisHandle } from '../redis/index.js';
import { openStore, type Store } from '../store/index.js';
import { libraryWarningsTo, type CliContext } from './context.js';

/**
 * The configured store, checked, then a Redis (a private redis-server without REDIS_URL). The
 * store comes first: a wrong or unreachable --store ends the command before a private Redis is
 * started, and when no Redis can be had the store is closed again. The caller stops the Redis and
 * closes the store.
 */
export async function openStoreAndRedis(
  ctx: CliContext,
  o: { spendsApiUnits?: boolean } = {},
): Promise<{ store: Store; redis: RedisHandle }> {
  const { config, log } = ctx;
  // the queue clients this command opens may warn on the console: their lines join its log
  libraryWarningsTo(log);
  const store = openStore(config.store, config);
  try {
    // a cluster that cannot be reached ends the command now, naming it, not after every batch failed
    await store.check();
    if (o.spendsApiUnits && !config.redisUrl) {
      // the ledger lives in the Redis the calls go through: a private one ends with the command
      log.warn(
        'no REDIS_URL: the API calls of this run are counted on a private Redis that ends with the command, not on a kept quota ledger; set REDIS_URL to keep them',
      );
    }
    return {
      store,
      redis: await ensureRedis({ url: config.redisUrl, prefix: config.queuePrefix, redisCluster: config.redisCluster, log }),
    };
  } catch (err) {
    await store.close();
    throw err;
  }
}
