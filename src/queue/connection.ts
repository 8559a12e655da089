import { createRequire } from 'node:module';
import type * as IORedis from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';

// ioredis's one home, required rather than imported, as BullMQ is (see bullmq.ts): 52 against 69 ms
const ioredis = createRequire(import.meta.url)('ioredis') as typeof IORedis;
const { Cluster, Redis } = ioredis;
type Cluster = IORedis.Cluster;
type Redis = IORedis.Redis;

/** A connection to one Redis or to a Redis Cluster: BullMQ and every key sandtrail writes work on both. */
export type RedisClient = Redis | Cluster;

/** How to reach Redis besides its URL: a cluster (`redisCluster`) is spoken to with ioredis's Cluster client. */
export interface RedisMode {
  redisCluster: boolean;
}

/** The URLs of a `redisUrl` setting: one URL, or for a cluster a comma-separated list of some of its nodes. */
export function redisUrls(url: string): string[] {
  return url
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
}

/**
 * The seed nodes of a cluster and the options every node connection shares: credentials of the
 * first URL that has some (an ACL user exists on every node), TLS when the URLs are `rediss://`.
 */
function clusterSeeds(url: string): { nodes: { host: string; port: number }[]; node: RedisOptions } {
  const urls = redisUrls(url).map((u) => new URL(u));
  const withUser = urls.find((u) => u.username || u.password);
  const node: RedisOptions = {};
  if (withUser?.username) node.username = decodeURIComponent(withUser.username);
  if (withUser?.password) node.password = decodeURIComponent(withUser.password);
  if (urls.some((u) => u.protocol === 'rediss:')) node.tls = {};
  const nodes = urls.map((u) => ({ host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port || 6379) }));
  return { nodes, node };
}

/**
 * Node names are handed to the socket as they are: ioredis would otherwise resolve them first and
 * connect to the address, so a TLS certificate naming the host (a managed cluster's) would not match.
 */
const keepHostNames: ClusterOptions['dnsLookup'] = (address, callback) => callback(null, address);

/** A Redis connection as BullMQ workers need it (no per-command retry limit: workers block). */
export function createRedis(url: string, mode: RedisMode): RedisClient {
  let r: RedisClient;
  if (mode.redisCluster) {
    const { nodes, node } = clusterSeeds(url);
    r = new Cluster(nodes, { enableReadyCheck: true, dnsLookup: keepHostNames, redisOptions: { ...node, maxRetriesPerRequest: null } });
  } else {
    r = new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false });
  }
  // Connection errors are retried by ioredis and surface through the operations that need Redis.
  r.on('error', () => undefined);
  return r;
}

/**
 * A connection that asks once and never retries (doctor's checks, a ledger read): every command
 * fails within `timeoutMs` when Redis does not answer. With `lazyConnect`, nothing is sent before
 * `connect()`. The caller listens to 'error' (the cause of a refused connection is only there).
 */
export function openRedisProbe(url: string, timeoutMs: number, o: Partial<RedisMode> & { lazyConnect?: boolean } = {}): RedisClient {
  return o.redisCluster ? openClusterProbe(url, timeoutMs, o) : openNodeProbe(url, timeoutMs, o);
}

/** openRedisProbe's options for one connection, to a single Redis or to a node of a cluster. */
function probeOptions(timeoutMs: number): RedisOptions {
  return {
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    // a refused connection has closed before disconnect() listens for its 'close': ioredis would
    // then hold the process for its disconnectTimeout (2 s by default, every private Redis's start-up)
    disconnectTimeout: 50,
    // the rights are asked by checkRedisRights, each with a line that names the fix (ioredis's own
    // check prints to stderr for a user that may not run INFO)
    enableReadyCheck: false,
  };
}

/** openRedisProbe to one Redis (a single one, or one node of a cluster by itself). */
export function openNodeProbe(url: string, timeoutMs: number, o: { lazyConnect?: boolean } = {}): Redis {
  return new Redis(url, { ...probeOptions(timeoutMs), lazyConnect: o.lazyConnect ?? false, retryStrategy: () => null });
}

/** openRedisProbe to a cluster through the nodes `url` lists: one slot-map read, no retries. */
export function openClusterProbe(url: string, timeoutMs: number, o: { lazyConnect?: boolean } = {}): Cluster {
  const { nodes, node } = clusterSeeds(url);
  const options: ClusterOptions = {
    lazyConnect: o.lazyConnect ?? false,
    enableReadyCheck: false,
    clusterRetryStrategy: () => null,
    slotsRefreshTimeout: timeoutMs,
    // no periodic slot refresh: a probe lives for a few commands
    slotsRefreshInterval: 0,
    dnsLookup: keepHostNames,
    redisOptions: { ...node, ...probeOptions(timeoutMs) },
  };
  return new Cluster(nodes, options);
}
