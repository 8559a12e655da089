import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';

/** Spaces out API requests; `acquire` resolves when one more request may be sent. */
export interface RateLimiter {
  acquire(signal?: AbortSignal): Promise<void>;
}

/** No limit (gti.requestsPerMinute 0). */
export const UNLIMITED: RateLimiter = { acquire: async () => undefined };

/**
 * A requests-per-minute limit shared by every process on the same Redis: one counter per UTC
 * minute window (INCR + EXPIRE in one MULTI). A request over the limit waits for the next window
 * instead of being sent, so a fleet of lookup workers stays under the licence's per-minute quota
 * together. Fixed windows allow up to 2× the rate across a window edge; the API's own 429 (with
 * Retry-After) handles what slips through.
 */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly key: string,
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  async acquire(signal?: AbortSignal): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const t = this.now();
      const window = Math.floor(t / 60_000);
      const k = `${this.key}:${window}`;
      const res = await this.redis.multi().incr(k).expire(k, 120).exec();
      const n = Number(res?.[0]?.[1] ?? 0);
      if (n <= this.perMinute) return;
      await sleep((window + 1) * 60_000 - t + Math.floor(Math.random() * 250), undefined, { signal });
    }
  }
}
