import { ensureRedis, type RedisHandle } from '../redis/index.js';
import { openStore, storeWouldBeCreated, type Store } from '../store/index.js';
import { libraryWarningsTo, type CliContext } from './context.js';

/**
 * The configured store, checked, and a Redis (a private redis-server without REDIS_URL). An
 * existing store comes first: a wrong or unreachable --store ends the command before a private
 * Redis is started. A store this command would create comes second, once its path is checked: a
 * Redis that cannot be had then leaves no empty store behind for later reads to mistake for one.
 * Whichever was had is released when the other fails; the caller stops the Redis and closes the store.
 */
export async function openStoreAndRedis(
  ctx: CliContext,
  o: { spendsApiUnits?: boolean } = {},
): Promise<{ store: Store; redis: RedisHandle }> {
  const { config, log } = ctx;
  // the queue clients this command opens may warn on the console: their lines join its log
  libraryWarningsTo(log);
  const connect = (): Promise<RedisHandle> =>
    ensureRedis({ url: config.redisUrl, prefix: config.queuePrefix, redisCluster: config.redisCluster, log });
  const redisFirst = storeWouldBeCreated(config.store) ? await connect() : undefined;
  let store: Store | undefined;
  try {
    store = openStore(config.store, config);
    // a cluster that cannot be reached ends the command now, naming it, not after every batch failed
    await store.check();
    if (o.spendsApiUnits && !config.redisUrl) {
      // the ledger lives in the Redis the calls go through: a private one ends with the command
      log.warn(
        'no REDIS_URL: the API calls of this run are counted on a private Redis that ends with the command, not on a kept quota ledger; set REDIS_URL to keep them',
      );
    }
    return { store, redis: redisFirst ?? (await connect()) };
  } catch (err) {
    await store?.close();
    await redisFirst?.stop();
    throw err;
  }
}
