import type { Cluster, Redis } from 'ioredis';
import { SandtrailError } from '../errors/index.js';

/**
 * The `--max-api-units` of one run, shared by every worker that takes its jobs: units are
 * reserved in Redis before each request (INCRBY, given back when over, or when the request got no
 * answer), so a fleet stops at the same total as one process would, and once the run's requests
 * are over the counter holds what the service charged: the run summary's `api_units`.
 */
export class RunBudget {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly key: string,
    private readonly max: number,
  ) {}

  /** The Redis key of a run's spent units. */
  static keyOf(prefix: string, run: string): string {
    return `${prefix}:budget:${run}`;
  }

  /** Reserves units; throws BUDGET_EXCEEDED (and reserves nothing) when they would pass the maximum. */
  async spend(units: number): Promise<void> {
    if (units <= 0) return;
    const res = await this.redis
      .multi()
      .incrby(this.key, units)
      .expire(this.key, 7 * 24 * 3600)
      .exec();
    const total = Number(res?.[0]?.[1] ?? 0);
    if (total > this.max) {
      await this.redis.decrby(this.key, units);
      throw new SandtrailError(
        'BUDGET_EXCEEDED',
        `stopping: the next call would pass --max-api-units ${this.max} (${total - units} spent)`,
      );
    }
  }

  /** Gives back units reserved for a request that got no answer (the service charged nothing for it). */
  async refund(units: number): Promise<void> {
    if (units <= 0) return;
    await this.redis.decrby(this.key, units);
  }

  /** Units spent so far by the run: those of answered requests, and of requests still in flight. */
  async spent(): Promise<number> {
    return Number((await this.redis.get(this.key)) ?? 0);
  }
}
