/**
 * The Elasticsearch side of the backfill phase: a real node (started here from the distribution
 * the tests use, or ELASTICSEARCH_URL's cluster), an index prefix of the run's own, and what the
 * written store weighs: primary bytes per behaviour as written and once merged to one segment.
 */
import { readFileSync } from 'node:fs';
import type { Client } from '@elastic/elasticsearch';
import { clusterVersion } from '../src/store/index.js';
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
  /** CPU seconds the node's JVM has used (user + system), or undefined for ELASTICSEARCH_URL's cluster. */
  cpuSeconds(): number | undefined;
  /** The same cluster under another prefix of the run's own (its drop deletes only that prefix's indices). */
  scratch(): BenchElasticsearch;
}

/** utime + stime of a process from /proc, in seconds (Linux's 100 ticks a second), or undefined. */
function procCpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // the command name (field 2) may hold spaces: count the fields after its closing parenthesis
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return undefined;
  }
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
  // GET / is missing from the integration-test distribution the tests use
  const version = node?.version ?? (await clusterVersion(fixture.store.client));
  const where = node ? 'a node started by the bench' : 'ELASTICSEARCH_URL';
  const under = (f: ReturnType<typeof openRealStore>, stop: () => Promise<void>): BenchElasticsearch => ({
    url: url as string,
    prefix: f.prefix,
    version,
    where,
    auth,
    admin: f.admin,
    drop: () => f.close(),
    stop,
    cpuSeconds: () => procCpuSeconds(node?.serverPid()),
    scratch: () => under(openRealStore({ url: url as string, auth }), async () => undefined),
  });
  return under(fixture, async () => node?.stop());
}

/** What the primary shards of some indices hold, from their segments. */
export interface SegmentFigures {
  bytes: number;
  docs: number;
  shards: number;
}

/**
 * The primary shards' segments of `index` (a name or pattern), refreshed first: the segments'
 * own sizes, since _stats' store size is cached for index.store.stats_refresh_interval (10 s).
 * `docs` counts Lucene documents (nested ones included).
 */
export async function primarySegments(c: Client, index: string): Promise<SegmentFigures> {
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
}

/** The stored ids (each once across the day indices) and the primary bytes, as written and merged. */
export async function elasticsearchFigures(es: BenchElasticsearch): Promise<ElasticsearchFigures> {
  const c = es.admin;
  const { ids } = await realEsContents(c, es.prefix);
  const index = `${es.prefix}-behaviours-*`;
  const stats = (): Promise<SegmentFigures> => primarySegments(c, index);
  const written = await stats();
  await c.indices.forcemerge({ index, max_num_segments: 1, wait_for_completion: true });
  const merged = await stats();
  return { ids, docs: merged.docs, primaryBytes: written.bytes, primaryBytesMerged: merged.bytes, primaryShards: written.shards };
}
