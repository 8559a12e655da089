import type { Cluster, Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { RedisRateLimiter, UNLIMITED, type GtiClient, type RateLimiter } from '../gti/index.js';
import { apiUnitsOf, ledgerClient, QuotaLedger } from '../quota/index.js';
import type { RunBudget } from './RunBudget.js';

/** Feed reads and their links cost nothing and are paced by the feed itself, not the API limit. */
const isFeedPath = (path: string): boolean => path.startsWith('/feeds/');

export interface MeteredClient {
  client: GtiClient;
  /** API units this client spent (requests the service answered, whatever their status). */
  spent(): number;
}

/**
 * A GTI client whose every request goes through the quota machinery: the shared per-minute rate
 * limit (gti.requestsPerMinute, API calls only), the run's budget (reserved before the request,
 * given back when the request got no answer), and the ledger (recorded once the service
 * answered, at the units the policy gives it). Reservation and ledger thus end at the same
 * figure: what the service answered.
 */
export function meteredClient(o: { config: Config; redis: Redis | Cluster; budget?: RunBudget; signal?: AbortSignal }): MeteredClient {
  const { gti, queuePrefix } = o.config;
  const ledger = new QuotaLedger(o.redis, queuePrefix);
  const limiter: RateLimiter =
    gti.requestsPerMinute > 0 ? new RedisRateLimiter(o.redis, `${queuePrefix}:ratelimit:gti`, gti.requestsPerMinute) : UNLIMITED;
  let spent = 0;
  const client = ledgerClient(gti, {
    ledger,
    beforeCall: async (c) => {
      if (!isFeedPath(c.path)) await limiter.acquire(o.signal);
      await o.budget?.spend(apiUnitsOf(c.method, c.path));
    },
    onNoAnswer: (c) => o.budget?.refund(apiUnitsOf(c.method, c.path)),
    afterCall: (c) => (spent += apiUnitsOf(c.method, c.path)),
  });
  return { client, spent: () => spent };
}
