import type { Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import { GtiClient, RedisRateLimiter, UNLIMITED, type RateLimiter } from '../gti/index.js';
import { chargeOf, emptyPolicyState, QuotaLedger } from '../quota/index.js';
import type { RunBudget } from './RunBudget.js';

/** API units one request costs by the quota policy (rule 1: 1; rule 2/3: 0). */
export function unitsOf(method: string, path: string): number {
  const { charge } = chargeOf({ op: 'api', method, path, user: 'estimate', at: new Date() }, emptyPolicyState());
  return charge.units.api_requests ?? 0;
}

/** Feed reads and their links cost nothing and are paced by the feed itself, not the API limit. */
const isFeedPath = (path: string): boolean => path.startsWith('/feeds/');

export interface MeteredClient {
  client: GtiClient;
  /** API units this client spent (requests sent, whatever their answer). */
  spent(): number;
}

/**
 * A GTI client whose every request goes through the quota machinery: the shared per-minute rate
 * limit (gti.requestsPerMinute, API calls only), the run's budget (reserved before the request),
 * and the ledger (recorded once the service answered, at the units the policy gives it).
 */
export function meteredClient(o: { config: Config; redis: Redis; budget?: RunBudget; signal?: AbortSignal }): MeteredClient {
  const { gti, queuePrefix } = o.config;
  if (!gti.apiKey) throw new SandtrailError('USAGE', 'set GTI_APIKEY (or SANDTRAIL_GTI_API_KEY) to call the GTI API');
  const ledger = new QuotaLedger(o.redis, queuePrefix);
  const limiter: RateLimiter =
    gti.requestsPerMinute > 0 ? new RedisRateLimiter(o.redis, `${queuePrefix}:ratelimit:gti`, gti.requestsPerMinute) : UNLIMITED;
  const user = gti.user ?? 'default';
  let spent = 0;
  const client = new GtiClient({
    baseUrl: gti.baseUrl,
    apiKey: gti.apiKey,
    xTool: gti.xTool,
    timeoutMs: gti.timeoutMs,
    beforeCall: async (c) => {
      if (!isFeedPath(c.path)) await limiter.acquire(o.signal);
      await o.budget?.spend(unitsOf(c.method, c.path));
    },
    onCall: async (c) => {
      spent += unitsOf(c.method, c.path);
      await ledger.record({ op: 'api', method: c.method, path: c.path, user, group: gti.group });
    },
  });
  return { client, spent: () => spent };
}
