import { RedisServer } from './redisServer.js';

/**
 * Starts one private redis-server for the whole run (vitest globalSetup); test processes find it
 * in SANDTRAIL_TEST_REDIS_URL (forked after this ran, they inherit the environment).
 */
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env.SANDTRAIL_TEST_REDIS_URL) return async () => undefined;
  const redis = await RedisServer.start({ aof: false });
  process.env.SANDTRAIL_TEST_REDIS_URL = redis.url;
  return () => redis.stop();
}
