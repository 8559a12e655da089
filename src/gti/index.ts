export { GtiClient } from './GtiClient.js';
export type { GtiClientOptions } from './GtiClient.js';
export { readCollection } from './readCollection.js';
export type { PageInfo } from './readCollection.js';
export { RedisRateLimiter, UNLIMITED } from './RateLimiter.js';
export type { RateLimiter } from './RateLimiter.js';
export { callWithRetry } from './callWithRetry.js';
export type { RetryOptions } from './callWithRetry.js';
export { PagingGuard } from './PagingGuard.js';
