import { Client } from '@elastic/elasticsearch';
import type * as Testcontainers from 'testcontainers';
import { openElasticsearchStore, type ElasticsearchStore } from '../../src/store/index.js';

/** How the suites reach a real cluster, or why they cannot. */
export type RealCluster = { url: string; auth: { apiKey?: string; username?: string; password?: string } } | { skip: string };

const IMAGE = 'docker.elastic.co/elasticsearch/elasticsearch:8.19.0';
let started: Promise<RealCluster> | undefined;
let stopContainer: (() => Promise<unknown>) | undefined;

/**
 * A real cluster for the shared suites: `ELASTICSEARCH_URL` (with ELASTICSEARCH_API_KEY or
 * ELASTICSEARCH_USERNAME/PASSWORD) when set, else a single-node container when testcontainers
 * finds a container runtime, else a skip reason naming both.
 */
export function realCluster(): Promise<RealCluster> {
  started ??= (async (): Promise<RealCluster> => {
    const env = process.env;
    if (env.ELASTICSEARCH_URL) {
      return {
        url: env.ELASTICSEARCH_URL,
        auth: { apiKey: env.ELASTICSEARCH_API_KEY, username: env.ELASTICSEARCH_USERNAME, password: env.ELASTICSEARCH_PASSWORD },
      };
    }
    let tc: typeof Testcontainers;
    try {
      tc = await import('testcontainers');
      await tc.getContainerRuntimeClient();
    } catch (err) {
      return {
        skip: `no real cluster: ELASTICSEARCH_URL is not set and testcontainers found no container runtime (${(err as Error).message})`,
      };
    }
    const container = await new tc.GenericContainer(IMAGE)
      .withEnvironment({ 'discovery.type': 'single-node', 'xpack.security.enabled': 'false', ES_JAVA_OPTS: '-Xms512m -Xmx512m' })
      .withExposedPorts(9200)
      .withWaitStrategy(tc.Wait.forHttp('/_cluster/health?wait_for_status=yellow', 9200).forStatusCode(200))
      .withStartupTimeout(240_000)
      .start();
    stopContainer = () => container.stop();
    return { url: `http://${container.getHost()}:${container.getMappedPort(9200)}`, auth: {} };
  })();
  return started;
}

/** Stops a container this module started (no-op otherwise). */
export async function stopRealCluster(): Promise<void> {
  await stopContainer?.();
  stopContainer = undefined;
}

let n = 0;

/** A store on the real cluster under a fresh prefix; `close` deletes everything it created. */
export function openRealStore(cluster: { url: string; auth: { apiKey?: string; username?: string; password?: string } }): {
  store: ElasticsearchStore;
  prefix: string;
  close(): Promise<void>;
} {
  const prefix = `sandtrail-test-${process.pid}-${Date.now().toString(36)}-${n++}`;
  const store = openElasticsearchStore(`es:${cluster.url}`, { ...cluster.auth, indexPrefix: prefix, refresh: 'wait_for', maxRetries: 0 });
  return {
    store,
    prefix,
    close: async () => {
      const { apiKey, username, password } = cluster.auth;
      const auth = apiKey ? { apiKey } : username ? { username, password: password ?? '' } : undefined;
      const admin = new Client({ node: cluster.url, ...(auth ? { auth } : {}) });
      try {
        // names, not wildcards: clusters default to action.destructive_requires_name
        // the single-index stores: each index and its template share one name
        const singles = ['dead-letters', 'batches', 'private-files', 'artefacts', 'watches', 'watch-hits'].map((s) => `${prefix}-${s}`);
        // every partition behind the read alias (the daily indices and the undated one), by name
        const partitions = Object.keys(
          await admin.indices.getAlias({ name: `${prefix}-behaviours` }, { ignore: [404] }).catch(() => ({})),
        ).filter((i) => i.startsWith(`${prefix}-behaviours-`));
        await admin.indices.delete({
          index: [`${prefix}-behaviours-000001`, ...partitions, ...singles],
          ignore_unavailable: true,
        });
        for (const t of [`${prefix}-behaviours`, ...singles]) {
          await admin.indices.deleteIndexTemplate({ name: t }, { ignore: [404] });
        }
        for (const c of [`${prefix}-behaviours-settings`, `${prefix}-behaviours-mappings`]) {
          await admin.cluster.deleteComponentTemplate({ name: c }, { ignore: [404] });
        }
        // the ILM policy goes once no index uses it
        await admin.ilm.deleteLifecycle({ name: `${prefix}-behaviours` }, { ignore: [404] });
      } finally {
        await admin.close();
        await store.close();
      }
    },
  };
}
