import { builtCli } from './cli.js';
import { ElasticsearchNode } from './elasticsearchNode.js';
import { RedisServer } from './redisServer.js';

/**
 * Starts one private redis-server and one real Elasticsearch node for the whole run (vitest
 * globalSetup); test processes find them in SANDTRAIL_TEST_REDIS_URL and SANDTRAIL_TEST_ES_URL
 * (forked after this ran, they inherit the environment). ELASTICSEARCH_URL points the suite at a
 * cluster of one's own instead; SANDTRAIL_TEST_ES=skip runs without one (the Elasticsearch cases
 * are then reported as skipped, with that reason). SANDTRAIL_TEST_ES_VERSION picks another release
 * of the distribution than scripts/elasticsearch/pom.xml's.
 */
export default async function setup(): Promise<() => Promise<void>> {
  // the CLI the tests run is the build: brought up to date once, before test processes start
  builtCli();
  const stops: (() => Promise<void>)[] = [];
  if (!process.env.SANDTRAIL_TEST_REDIS_URL) {
    const redis = await RedisServer.start({ aof: false });
    process.env.SANDTRAIL_TEST_REDIS_URL = redis.url;
    stops.push(() => redis.stop());
  }
  if (!process.env.ELASTICSEARCH_URL && !process.env.SANDTRAIL_TEST_ES_URL && process.env.SANDTRAIL_TEST_ES !== 'skip') {
    const t0 = Date.now();
    // SANDTRAIL_TEST_ES_VERSION runs the suite on another release (9.x wants SANDTRAIL_ES_JAVA_HOME set to a JDK 21 or later)
    const version = process.env.SANDTRAIL_TEST_ES_VERSION || undefined;
    const es = await ElasticsearchNode.start({ heapMb: 768, nodeName: 'sandtrail-test', ...(version ? { version } : {}) });
    process.env.SANDTRAIL_TEST_ES_URL = es.url;
    console.error(
      `Elasticsearch ${es.version} started for the run on ${es.url} in ${Date.now() - t0} ms (a real node, from Maven Central)`,
    );
    stops.push(() => es.stop());
  }
  return async () => {
    for (const stop of stops.reverse()) await stop();
  };
}
