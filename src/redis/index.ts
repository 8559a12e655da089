export { ensureRedis } from './ensureRedis.js';
export type { RedisHandle, EnsureRedisOptions } from './ensureRedis.js';
