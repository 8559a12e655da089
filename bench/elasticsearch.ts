/**
 * The Elasticsearch side of the backfill phase: a real node (started here from the distribution
 * the tests use, or ELASTICSEARCH_URL's cluster), an index prefix of the run's own, and what the
 * written store weighs: primary bytes per behaviour as written and once merged to one segment.
 */
import type { Client } from '@elastic/elasticsearch';
import { ElasticsearchNode } from '../test/support/elasticsearchNode.js';
import { openRealStore, realEsContents } from '../test/support/realElasticsearch.js';

/** Where the phase writes, and how to remove it afterwards. */
export interface BenchElasticsearch {
  url: string;
  prefix: string;
  version: string;
  /** 'a node started by the bench' or 'ELASTICSEARCH_URL'. */
  where: string;
  /** ELASTICSEARCH_URL's credentials (none for a node of the bench's own). */
  auth: { apiKey?: string; username?: string; password?: string };
  /** A client with those credentials (closed by drop). */
  admin: Client;
  drop(): Promise<void>;
  /** Stops a node the bench started (no-op for ELASTICSEARCH_URL). */
  stop(): Promise<void>;
}

export interface ElasticsearchFigures {
  ids: string[];
  docs: number;
  /** Primary store bytes of the day indices right after the backfill (segments as written). */
  primaryBytes: number;
  /** The same after a force-merge to one segment per shard: the lasting size. */
  primaryBytesMerged: number;
  primaryShards: number;
}

/** A node of the bench's own unless ELASTICSEARCH_URL names a cluster (its credentials from ELASTICSEARCH_API_KEY or _USERNAME/_PASSWORD). */
export async function startBenchElasticsearch(say: (msg: string) => void): Promise<BenchElasticsearch> {
  const env = process.env;
  let node: ElasticsearchNode | undefined;
  let url = env.ELASTICSEARCH_URL;
  if (!url) {
    say('starting an Elasticsearch node (the distribution of scripts/elasticsearch/pom.xml, 1 GB heap)...');
    node = await ElasticsearchNode.start({ heapMb: 1024, nodeName: 'bench' });
    url = node.url;
  }
  const auth = node
    ? {}
    : { apiKey: env.ELASTICSEARCH_API_KEY, username: env.ELASTICSEARCH_USERNAME, password: env.ELASTICSEARCH_PASSWORD };
  const fixture = openRealStore({ url, auth });
  const version = node?.version ?? (await fixture.store.client.info()).version.number;
  return {
    url,
    prefix: fixture.prefix,
    version,
    where: node ? 'a node started by the bench' : 'ELASTICSEARCH_URL',
    auth,
    admin: fixture.admin,
    drop: () => fixture.close(),
    stop: async () => node?.stop(),
  };
}

/** The stored ids (each once across the day indices) and the primary bytes, as written and merged. */
export async function elasticsearchFigures(es: BenchElasticsearch): Promise<ElasticsearchFigures> {
  const c = es.admin;
  const { ids } = await realEsContents(c, es.prefix);
  const index = `${es.prefix}-behaviours-*`;
  // the segments' own sizes: _stats' store size is cached for index.store.stats_refresh_interval (10 s)
  const stats = async (): Promise<{ bytes: number; docs: number; shards: number }> => {
    await c.indices.refresh({ index });
    const r = await c.indices.segments({ index });
    let bytes = 0;
    let docs = 0;
    let shards = 0;
    for (const i of Object.values(r.indices ?? {})) {
      for (const copies of Object.values(i.shards ?? {})) {
        for (const copy of [copies].flat() as {
          routing?: { primary?: boolean };
          segments?: Record<string, { size_in_bytes?: number; num_docs?: number }>;
        }[]) {
          if (copy.routing?.primary !== true) continue;
          shards++;
          for (const seg of Object.values(copy.segments ?? {})) {
            bytes += seg.size_in_bytes ?? 0;
            docs += seg.num_docs ?? 0;
          }
        }
      }
    }
    return { bytes, docs, shards };
  };
  const written = await stats();
  await c.indices.forcemerge({ index, max_num_segments: 1, wait_for_completion: true });
  const merged = await stats();
  return { ids, docs: merged.docs, primaryBytes: written.bytes, primaryBytesMerged: merged.bytes, primaryShards: written.shards };
}
