import type { Cluster, Redis } from 'ioredis';
import { SandtrailError, errorCode } from '../errors/index.js';
import { clusterDiagnosis, clusterNodes, describeNode, nodeOfUrl } from './clusterNodes.js';
import { openClusterProbe, openNodeProbe, redisUrls, type RedisClient } from './connection.js';

export interface CheckRedisOptions {
  /** Connect and command timeout of each question (5 s by default). */
  timeoutMs?: number;
  /** The queue prefix: the user's rights under it are checked too. */
  prefix?: string;
  /** `url` lists nodes of a Redis Cluster. */
  redisCluster?: boolean;
  /**
   * Told what holds but is worth an operator's look (a listed cluster node down that the cluster
   * knows), with the listed URL it is about: its wording changes as the cluster's view does.
   */
  onWarning?: (message: string, about?: string) => void;
}

/**
 * Fails fast with REDIS_UNAVAILABLE (and no URL credentials in the message) when Redis is
 * unreachable. With `prefix`, also with REDIS_FORBIDDEN when the connection's user (an ACL user)
 * may not do what the pipeline does there: read the server's INFO (BullMQ checks the version),
 * run scripts, and read and write keys under the queue prefix. Without this, a worker meeting a
 * refusal deep inside BullMQ retries it forever instead of saying so. A cluster is checked as a
 * whole (checkRedisCluster); a cluster node given as a single Redis is CONFIG_INVALID, since
 * every key would answer MOVED.
 */
export async function checkRedis(url: string, o: CheckRedisOptions = {}): Promise<void> {
  const timeoutMs = o.timeoutMs ?? 5000;
  if (o.redisCluster) return checkRedisCluster(url, o, timeoutMs);
  const r = await connectNode(url, timeoutMs);
  try {
    if ((await clusterEnabled(r)) === true) {
      throw new SandtrailError(
        'CONFIG_INVALID',
        `Redis at ${redactUrl(url)} is a node of a Redis Cluster: set SANDTRAIL_REDIS_CLUSTER=true (--redis-cluster), and list a few of its nodes in REDIS_URL (docs/fleet.md)`,
      );
    }
    if (o.prefix !== undefined) await checkRedisRights(r, url, o.prefix);
  } finally {
    r.disconnect();
  }
}

/**
 * A cluster is usable when a node `url` lists answers (a listed node that does not is refused
 * unless the cluster knows it: then a warning), every listed node that answers is a cluster node, the cluster
 * covers every slot (`cluster_state:ok`), and every master of its slot map answers at the
 * address the cluster announces (a cluster behind NAT announces addresses a client may not
 * reach: every command for those slots would then hang in retries).
 */
async function checkRedisCluster(url: string, o: CheckRedisOptions, timeoutMs: number): Promise<void> {
  const urls = redisUrls(url);
  const seeds = await Promise.allSettled(urls.map((u) => connectNode(u, timeoutMs)));
  try {
    const refused = seeds.find((s) => s.status === 'rejected' && errorCode(s.reason) === 'REDIS_FORBIDDEN');
    if (refused?.status === 'rejected') throw refused.reason as Error;
    const up = seeds.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const down = seeds.flatMap((s, i) => (s.status === 'rejected' ? [{ url: urls[i] ?? '', message: (s.reason as Error).message }] : []));
    for (const [i, s] of seeds.entries()) {
      if (s.status === 'fulfilled' && (await clusterEnabled(s.value)) === false) {
        throw new SandtrailError(
          'CONFIG_INVALID',
          `Redis at ${redactUrl(urls[i] ?? '')} is not a cluster node (cluster_enabled:0): unset SANDTRAIL_REDIS_CLUSTER (--redis-cluster) and give its URL alone`,
        );
      }
    }
    // listed nodes are seeds, as for every cluster client: one that answers is enough, and a silent
    // one the cluster knows (a failed master its replica replaced) is only worth a warning
    const known = up[0] && down.length ? await clusterNodes(up[0]).catch(() => []) : [];
    const unknown: string[] = [];
    for (const d of down) {
      const node = await nodeOfUrl(d.url, known);
      if (!node) unknown.push(d.message);
      else
        o.onWarning?.(
          `${d.message}: the cluster knows it as ${describeNode(node, known)}; going on through the listed nodes that answer (remove it from REDIS_URL once it is gone for good)`,
          d.url,
        );
    }
    if (up.length === 0 || unknown.length > 0) {
      throw new SandtrailError(
        'REDIS_UNAVAILABLE',
        `${(up.length === 0 ? down.map((d) => d.message) : unknown).join('; ')}: start that cluster node, or remove it from REDIS_URL (a few reachable nodes are enough; the others are found through them)`,
      );
    }
    // asked of a listed node that answered: a command to the cluster could land on a failed master
    const first = up[0] as Redis;
    const info = infoFields(String(await first.call('CLUSTER', 'INFO')));
    if (info.get('cluster_state') !== 'ok') {
      const why = await clusterDiagnosis(first, o.prefix).catch(() => `cluster_state:${info.get('cluster_state') ?? '?'}`);
      throw new SandtrailError(
        'REDIS_UNAVAILABLE',
        `the Redis Cluster at ${redactUrl(url)} is not serving (${why}; ${info.get('cluster_slots_ok') ?? '?'} of 16384 slots ok): bring its failed masters back, or assign their slots (redis-cli --cluster fix)`,
        { clusterState: info.get('cluster_state') ?? '?' },
      );
    }
  } finally {
    for (const s of seeds) if (s.status === 'fulfilled') s.value.disconnect();
  }
  const c = openClusterProbe(url, timeoutMs, { lazyConnect: true });
  let cause: Error | undefined;
  c.on('error', (err: Error) => (cause ??= err));
  try {
    try {
      await c.connect();
    } catch (err) {
      throw new SandtrailError(
        'REDIS_UNAVAILABLE',
        `cannot read the slot map of the Redis Cluster at ${redactUrl(url)}: ${(cause ?? (err as Error)).message}`,
      );
    }
    await checkMasters(c);
    if (o.prefix !== undefined) await checkRedisRights(c, url, o.prefix);
  } finally {
    c.disconnect();
  }
}

/** Every master of the slot map answers from here at the address the cluster announces. */
async function checkMasters(c: Cluster): Promise<void> {
  const masters = c.nodes('master');
  const answers = await Promise.allSettled(masters.map((m) => m.ping()));
  const silent = masters.filter((_, i) => answers[i]?.status === 'rejected').map((m) => `${m.options.host}:${m.options.port}`);
  if (silent.length) {
    throw new SandtrailError(
      'REDIS_UNAVAILABLE',
      `the Redis Cluster announces master${silent.length > 1 ? 's' : ''} ${silent.join(', ')}, which do${silent.length > 1 ? '' : 'es'} not answer from here: bring ${silent.length > 1 ? 'them' : 'it'} back, or make the cluster announce addresses this machine reaches (cluster-announce-ip)`,
    );
  }
}

/** Connects to one Redis and PINGs it: REDIS_UNAVAILABLE naming its URL (and a TLS fix) when it does not answer. */
async function connectNode(url: string, timeoutMs: number): Promise<Redis> {
  const r = openNodeProbe(url, timeoutMs, { lazyConnect: true });
  // with retries off, connect() may only say "Connection is closed": the 'error' event has the cause (a TLS handshake's)
  let cause: Error | undefined;
  r.on('error', (err: Error) => (cause ??= err));
  try {
    await r.connect();
    await r.ping();
    return r;
  } catch (err) {
    r.disconnect();
    const raw = (cause ?? (err as Error)).message;
    // ioredis's words for a server that does not speak Redis ("Protocol error ... Please report this")
    const message = /^Protocol error/.test(raw)
      ? `the server there does not speak the Redis protocol (${raw.replace(/\.? Please report this\.?$/, '')})`
      : raw;
    if (/\b(WRONGPASS|NOAUTH)\b/.test(message)) {
      // it answered: the server is there, the credentials are what to fix
      throw new SandtrailError(
        'REDIS_FORBIDDEN',
        `Redis at ${redactUrl(url)} refuses the credentials it was given (${message}): check the user and password of REDIS_URL, --redis-url or the config file's redisUrl (special characters percent-encoded)`,
      );
    }
    if (REFUSED_COMMAND.test(message)) {
      // it answered, and its ACL refuses even PING: a grant to fix, not a server to start
      throw new SandtrailError(
        'REDIS_FORBIDDEN',
        `Redis at ${redactUrl(url)} refuses the commands of REDIS_URL's user (${message}): grant it the queue prefix's keys and BullMQ's commands (docs/fleet.md)`,
      );
    }
    const fix = redisTlsFix(url, message);
    throw new SandtrailError('REDIS_UNAVAILABLE', `cannot reach Redis at ${redactUrl(url)}: ${message}${fix ? `; ${fix}` : ''}`);
  }
}

/** Whether the server runs in cluster mode; undefined when its user may not read INFO (the rights check says so). */
async function clusterEnabled(r: Redis): Promise<boolean | undefined> {
  try {
    return infoFields(await r.info('cluster')).get('cluster_enabled') === '1';
  } catch (err) {
    if (/NOPERM/.test((err as Error).message)) return undefined;
    throw err;
  }
}

/** The `key:value` lines of an INFO section or of CLUSTER INFO. */
export function infoFields(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) out.set(line.slice(0, i), line.slice(i + 1).trim());
  }
  return out;
}

/** Redis's answer to a command the user's ACL refuses: NOPERM, or its wording inside a script. */
export const REFUSED_COMMAND = /\bNOPERM\b|can't run this command/;

/** One write of each family BullMQ's scripts use on a key of the prefix, each removed at once. */
const BULLMQ_FAMILIES = `
local k = KEYS[1]
redis.call('set', k, '1', 'PX', 1000) redis.call('get', k) redis.call('del', k)
redis.call('hset', k, 'f', '1') redis.call('hget', k, 'f') redis.call('del', k)
redis.call('lpush', k, '1') redis.call('lrange', k, 0, 0) redis.call('del', k)
redis.call('sadd', k, '1') redis.call('smembers', k) redis.call('del', k)
redis.call('zadd', k, 1, '1') redis.call('zrange', k, 0, 0) redis.call('del', k)
redis.call('xadd', k, 'MAXLEN', '1', '*', 'f', '1') redis.call('xlen', k) redis.call('del', k)
return 1`;

/**
 * What the pipeline asks of its Redis user (an ACL user), each asked once: REDIS_FORBIDDEN, naming
 * the grant that fixes it, when one is refused.
 */
export async function checkRedisRights(r: RedisClient, url: string, prefix: string): Promise<void> {
  const key = `${prefix}:access-check`;
  const probes: [string, () => Promise<unknown>][] = [
    ['run INFO', () => r.info('server')],
    // a script touching a key under the prefix: scripting and the key pattern in one question
    ['run scripts on keys under its prefix', () => r.eval("return redis.call('exists', KEYS[1])", 1, key)],
    // the command families BullMQ's scripts write with, each undone at once
    ["run BullMQ's commands (strings, hashes, lists, sets, sorted sets, streams) in scripts", () => r.eval(BULLMQ_FAMILIES, 1, key)],
    // workers wait for jobs with a blocking command, sent outside scripts
    ['run blocking commands (BZPOPMIN)', () => r.bzpopmin(key, 0.01)],
  ];
  for (const [what, probe] of probes) {
    try {
      await probe();
    } catch (err) {
      const message = (err as Error).message;
      if (!REFUSED_COMMAND.test(message)) throw err;
      const user = decodeURIComponent(new URL(redisUrls(url)[0] ?? url).username) || 'default';
      throw new SandtrailError(
        'REDIS_FORBIDDEN',
        `the Redis user "${user}" at ${redactUrl(url)} may not ${what} (${message}); sandtrail needs its keys under "${prefix}:" and the commands of BullMQ: ACL SETUSER ${user} ~${prefix}:* &* +@all -@dangerous +info`,
      );
    }
  }
}

/** The fix of a connection to a `rediss://` URL refused for its server's certificate, or undefined for any other failure. */
export function redisTlsFix(url: string, message: string): string | undefined {
  const tls = url.startsWith('rediss:');
  if (tls && /certificate|self[- ]signed|unable to verify|altnames/i.test(message)) {
    return 'a certificate of a private CA is trusted with NODE_EXTRA_CA_CERTS=/path/to/ca.pem (docs/fleet.md)';
  }
  // a TLS handshake a plain port never answers, or a plain command a TLS-only port drops
  if (tls && /ETIMEDOUT|timed? ?out|ECONNRESET|wrong version number|packet length|socket hang up/i.test(message)) {
    return 'rediss:// speaks TLS: if this port serves plain Redis, use redis://';
  }
  if (!tls && /ECONNRESET|EPIPE|socket hang up|Connection is closed/i.test(message)) {
    return 'if this port serves TLS only (a managed Redis, tls-port), use rediss://';
  }
  return undefined;
}

/** Drops the password part of a URL (of each URL of a cluster's list) before it is shown anywhere. */
export function redactUrl(url: string): string {
  return redisUrls(url).map(redactOne).join(',');
}

function redactOne(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable url)';
  }
}
