import { Client } from '@elastic/elasticsearch';
import { openElasticsearchStore, type ElasticsearchStore } from '../../src/store/index.js';
import type { Contents } from './storeContents.js';
/** How the suites reach a real cluster, or why they cannot. */
export type RealCluster = { url: string; auth: { apiKey?: string; username?: string; password?: string } } | { skip: string };
export type Reachable = Exclude<RealCluster, { skip: string }>;

/**
 * The real cluster of the run: `ELASTICSEARCH_URL` (with ELASTICSEARCH_API_KEY or
 * ELASTICSEARCH_USERNAME/PASSWORD) when set, else the node test/support/globalSetup.ts started
 * (SANDTRAIL_TEST_ES_URL); a skip reason only when the run was told to do without
 * (SANDTRAIL_TEST_ES=skip).
 */
export function realCluster(): Promise<RealCluster> {
  const env = process.env;
  if (env.ELASTICSEARCH_URL) {
    return Promise.resolve({
      url: env.ELASTICSEARCH_URL,
      auth: { apiKey: env.ELASTICSEARCH_API_KEY, username: env.ELASTICSEARCH_USERNAME, password: env.ELASTICSEARCH_PASSWORD },
    });
  }
  if (env.SANDTRAIL_TEST_ES_URL) return Promise.resolve({ url: env.SANDTRAIL_TEST_ES_URL, auth: {} });
  return Promise.resolve({ skip: 'no Elasticsearch: SANDTRAIL_TEST_ES=skip and ELASTICSEARCH_URL unset' });
}

/** The run's real cluster; throws when there is none (a suite that needs it says so at once). */
export async function requireCluster(): Promise<Reachable> {
  const c = await realCluster();
  if ('skip' in c) throw new Error(c.skip);
  return c;
}

let n = 0;

/**
 * The behaviour indices' layout in tests: a refresh every second (Elasticsearch's own default)
 * rather than the store's 5 s, so a write with `refresh: 'wait_for'` waits up to 1 s, not 5.
 */
export const TEST_INDEX_LAYOUT = { refreshInterval: '1s' } as const;

/** A store on the real cluster under a fresh prefix; `close` deletes everything it created. */
export function openRealStore(cluster: { url: string; auth: { apiKey?: string; username?: string; password?: string } }): {
  store: ElasticsearchStore;
  prefix: string;
  /** A client of the cluster's own credentials, for reading back what a test wrote (closed by close()). */
  admin: Client;
  close(): Promise<void>;
} {
  const prefix = `sandtrail-test-${process.pid}-${Date.now().toString(36)}-${n++}`;
  const store = openElasticsearchStore(`es:${cluster.url}`, {
    ...cluster.auth,
    indexPrefix: prefix,
    refresh: 'wait_for',
    maxRetries: 0,
    index: TEST_INDEX_LAYOUT,
  });
  const { apiKey, username, password } = cluster.auth;
  const auth = apiKey ? { apiKey } : username ? { username, password: password ?? '' } : undefined;
  const admin = new Client({ node: cluster.url, ...(auth ? { auth } : {}) });
  return {
    store,
    prefix,
    admin,
    close: async () => {
      try {
        // names, not wildcards: clusters default to action.destructive_requires_name
        const singles = singleIndexNames(prefix);
        // every partition behind the read alias (the daily indices and the undated one), by name
        const partitions = Object.keys(
          await admin.indices.getAlias({ name: `${prefix}-behaviours` }, { ignore: [404] }).catch(() => ({})),
        ).filter((i) => i.startsWith(`${prefix}-behaviours-`));
        // in groups: the names go in the URL, which a node refuses past 4 KB (http.max_initial_line_length)
        const names = [`${prefix}-behaviours-000001`, ...partitions, ...singles];
        for (let i = 0; i < names.length; i += 40) {
          await admin.indices.delete({ index: names.slice(i, i + 40), ignore_unavailable: true });
        }
        for (const t of [`${prefix}-behaviours`, ...singles]) {
          await admin.indices.deleteIndexTemplate({ name: t }, { ignore: [404] });
        }
        for (const c of [`${prefix}-behaviours-settings`, `${prefix}-behaviours-mappings`]) {
          await admin.cluster.deleteComponentTemplate({ name: c }, { ignore: [404] });
        }
        // the ILM policy goes once no index uses it
        await admin.ilm.deleteLifecycle({ name: `${prefix}-behaviours` }, { ignore: [400, 404, 405] });
      } finally {
        await admin.close();
        await store.close();
      }
    },
  };
}

/**
 * The single-index stores of a store under `prefix`, in the order `es setup` creates them: each
 * index and its template share one name. `es.test.ts` checks that setup creates exactly these, so
 * a store added without them here fails there rather than leaving its index behind every test.
 */
export function singleIndexNames(prefix: string): string[] {
  return [
    'dead-letters',
    'batches',
    'private-files',
    'artefacts',
    'watches',
    'watch-hits',
    'collections',
    'collection-objects',
    'locator',
  ].map((s) => `${prefix}-${s}`);
}

/**
 * Reads back what an Elasticsearch store under `prefix` holds on a real cluster, in the form
 * storeContents gives for SQLite: the behaviour ids (each exactly once across the day indices),
 * their stored version (= last_modification_date), and the dead letters.
 */
export async function realEsContents(client: Client, prefix: string): Promise<Contents> {
  await client.indices.refresh({ index: `${prefix}-*`, ignore_unavailable: true, allow_no_indices: true });
  const copies = new Map<string, number[]>();
  let after: (string | number)[] | undefined;
  for (;;) {
    const r = await client.search({
      index: `${prefix}-behaviours`,
      size: 1000,
      version: true,
      _source: false,
      sort: [{ id: 'asc' }, { last_modification_date: 'asc' }],
      track_total_hits: false,
      ...(after ? { search_after: after } : {}),
    });
    for (const h of r.hits.hits) copies.set(h._id as string, [...(copies.get(h._id as string) ?? []), h._version as number]);
    if (r.hits.hits.length < 1000) break;
    after = r.hits.hits[r.hits.hits.length - 1]?.sort as (string | number)[];
  }
  for (const [id, v] of copies) if (v.length !== 1) throw new Error(`${v.length} live copies of ${id} across partitions`);
  const dead: { batch: string; line: number | null; stage: string }[] = [];
  const d = await client.search<{ batch: string; line: number | null; stage: string }>(
    { index: `${prefix}-dead-letters`, size: 10_000, _source: ['batch', 'line', 'stage'] },
    { ignore: [404] },
  );
  for (const h of d.hits?.hits ?? []) if (h._source) dead.push({ batch: h._source.batch, line: h._source.line, stage: h._source.stage });
  dead.sort((a, b) => a.batch.localeCompare(b.batch) || (a.line ?? -1) - (b.line ?? -1));
  const ids = [...copies.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return { ids, dead, lmd: new Map(ids.map((id) => [id, (copies.get(id) as number[])[0] as number])) };
}
