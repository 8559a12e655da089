import type { Config } from '../config/index.js';
import { elasticsearchHealth, openElasticsearch, type ElasticsearchHealthOptions } from '../store/index.js';
import type { CheckResult } from './CheckResult.js';

/** Each request's timeout, and the signal doctor aborts when it gives up on the check. */
export type CheckElasticsearchOptions = ElasticsearchHealthOptions;

/**
 * The Elasticsearch store's checks, asked of the backend (the client lives there): reachable,
 * 8.x or 9.x, set up and current, healthy, within its disk watermarks and shard sizes.
 */
export async function checkElasticsearch(spec: string, config: Config, o: CheckElasticsearchOptions): Promise<CheckResult[]> {
  // the store's own client creation (auth, TLS, prefix validation), bounded: no retries, short timeout
  const es = config.elasticsearch;
  const store = openElasticsearch(spec, { elasticsearch: { ...es, requestTimeoutMs: o.timeoutMs, maxRetries: 0, setup: 'manual' } });
  try {
    return await elasticsearchHealth(store, config, o);
  } finally {
    await store.close();
  }
}
