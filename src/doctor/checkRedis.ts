import { delimiter } from 'node:path';
import type { Redis } from 'ioredis';
import { errorCode, messageOf } from '../errors/index.js';
import { findExecutable, type ExecutableLookup } from '../feed/index.js';
import {
  checkRedis as checkCluster,
  checkRedisRights,
  clusterNodes,
  describeNode,
  infoFields,
  isDown,
  openClusterProbe,
  openNodeProbe,
  redactUrl,
  redisTlsFix,
  type RedisClient,
} from '../queue/index.js';
import { checkOf, worst, type CheckResult } from './CheckResult.js';
import { judgeRedis, type RedisFacts } from './judgeRedis.js';

/** Where Debian puts redis-server; often missing from a non-root user's PATH (as ensureRedis searches). */
const SBIN = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

export interface CheckRedisOptions {
  /** Where to look for redis-server and apt-get when no URL is configured. */
  lookup: ExecutableLookup & { pathEnv: string };
  /** Connect and command timeout. */
  timeoutMs: number;
  /** Aborted when doctor gives up on this check: the connection is closed. */
  signal: AbortSignal;
  /** Whether commands could install redis-server with apt-get themselves (they do as root). */
  isRoot: boolean;
  /** The queue prefix: the Redis user's rights are checked under it. */
  prefix: string;
  /** The URL lists nodes of a Redis Cluster. */
  redisCluster?: boolean;
}

/** The value of `CONFIG GET name`, or null when CONFIG is refused (renamed away, ACL, managed services). */
async function configGet(r: Redis, name: string): Promise<string | null> {
  try {
    const reply = (await r.call('CONFIG', 'GET', name)) as unknown;
    return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : null;
  } catch {
    return null;
  }
}

/** Without a URL: commands start a private redis-server (never doctor itself), so only its binary is checked. */
function privateRedis(o: CheckRedisOptions): CheckResult {
  const c = checkOf('redis', 'Redis');
  const path = [o.lookup.pathEnv, ...SBIN].join(delimiter);
  const bin = findExecutable('redis-server', path, o.lookup.extraDirs);
  const fleet = 'for a fleet, set REDIS_URL to a shared Redis >= 6.2 with maxmemory-policy noeviction and appendonly yes';
  if (bin) {
    return c.warn(
      `no REDIS_URL: each command starts a private redis-server (${bin}) on loopback for its duration, without persistence; worker commands and a fleet need a shared Redis`,
      fleet,
    );
  }
  const install = 'apt-get install redis-server, or set REDIS_URL to a Redis >= 6.2';
  if (o.isRoot && findExecutable('apt-get', o.lookup.pathEnv, o.lookup.extraDirs)) {
    return c.warn("no REDIS_URL and no redis-server: the first command installs Debian's redis-server with apt-get", install);
  }
  return c.fail('no REDIS_URL and no redis-server on PATH: commands cannot start their private Redis', install);
}

/** What the rights check says when the user has them. */
const rightsGranted = (prefix: string): string =>
  `the user may run INFO, scripts, BullMQ's commands and blocking commands on keys under "${prefix}:"`;

/** The rights every command and worker checks at start-up (checkRedisRights), as a check of its own. */
async function rightsCheck(r: RedisClient, url: string, prefix: string): Promise<CheckResult> {
  const c = checkOf('redis.rights', 'Redis user rights');
  try {
    await checkRedisRights(r, url, prefix);
    return c.pass(rightsGranted(prefix));
  } catch (err) {
    if (errorCode(err) !== 'REDIS_FORBIDDEN') return c.fail(messageOf(err), 'check the Redis user of REDIS_URL');
    return c.fail(
      messageOf(err),
      `grant the user what the message names (docs/fleet.md): ACL SETUSER <user> ~${prefix}:* &* +@all -@dangerous +info`,
    );
  }
}

/** Everything doctor asks a reachable Redis; each question answered or left undefined. */
async function readFacts(r: Redis, display: string): Promise<RedisFacts> {
  const facts: RedisFacts = { display };
  facts.version = infoFields(await r.info('server')).get('redis_version');
  const policy = await configGet(r, 'maxmemory-policy');
  if (policy !== null) facts.policy = { value: policy, via: 'CONFIG GET' };
  else {
    const fromInfo = infoFields(await r.info('memory')).get('maxmemory_policy');
    if (fromInfo) facts.policy = { value: fromInfo, via: 'INFO memory' };
  }
  const aof = infoFields(await r.info('persistence')).get('aof_enabled');
  if (aof !== undefined) facts.aof = aof === '1';
  facts.save = await configGet(r, 'save');
  const before = Date.now();
  const [seconds, micros] = (await r.time()) as [number | string, number | string];
  const after = Date.now();
  // the server read its clock about half-way through the round trip
  facts.skewMs = Number(seconds) * 1000 + Number(micros) / 1000 - (before + after) / 2;
  return facts;
}

/**
 * The Redis checks: with a URL, reachability and version, `maxmemory-policy`, persistence and
 * clock skew (one `redis` failure when it cannot be reached); without one, whether commands can
 * start their private redis-server.
 */
export async function checkRedis(url: string | undefined, o: CheckRedisOptions): Promise<CheckResult[]> {
  if (!url) return [privateRedis(o)];
  if (o.redisCluster) return checkRedisCluster(url, o);
  const display = redactUrl(url);
  const r = openNodeProbe(url, o.timeoutMs, { lazyConnect: true });
  // with retries off, connect() only says "Connection is closed": the 'error' event has the cause
  let cause: unknown;
  r.on('error', (err) => (cause ??= err));
  const close = (): void => r.disconnect();
  o.signal.addEventListener('abort', close, { once: true });
  try {
    try {
      await r.connect();
      await r.ping();
    } catch (err) {
      const message = messageOf(cause ?? err);
      if (/\b(WRONGPASS|NOAUTH)\b/.test(message)) {
        // it answered: the server is there, the credentials are what to fix
        return [
          checkOf('redis', 'Redis').fail(
            `Redis at ${display} refuses the credentials it was given: ${message}`,
            "check the user and password of REDIS_URL, --redis-url or the config file's redisUrl (special characters percent-encoded)",
          ),
        ];
      }
      return [
        checkOf('redis', 'Redis').fail(
          `cannot reach Redis at ${display}: ${message}`,
          redisTlsFix(url, message) ??
            'start Redis there, or correct REDIS_URL / --redis-url (unset it to let commands start a private one)',
        ),
      ];
    }
    const rights = await rightsCheck(r, url, o.prefix);
    let facts: RedisFacts;
    try {
      facts = await readFacts(r, display);
    } catch (err) {
      if (!/NOPERM/.test(messageOf(err))) throw err;
      // the user may not read INFO: what INFO tells cannot be judged, the rights check says why
      return [
        checkOf('redis', 'Redis').warn(
          `reachable at ${display}; version, policy and persistence not read (${messageOf(err)})`,
          rights.fix ?? '',
        ),
        rights,
      ];
    }
    return [...judgeRedis(facts), rights];
  } finally {
    o.signal.removeEventListener('abort', close);
    close();
  }
}

/**
 * The cluster's nodes as a master sees them: failed nodes named; every slot is served (the start-up
 * check passed); a master without a healthy replica is one loss away from unserved slots.
 */
async function judgeTopology(node: RedisClient, listedDown: readonly string[]): Promise<CheckResult> {
  const t = checkOf('redis.cluster', 'Redis Cluster nodes');
  const nodes = await clusterNodes(node);
  const masters = nodes.filter((n) => n.flags.includes('master') && !isDown(n) && n.slots.length > 0);
  const lone = masters.filter((m) => !nodes.some((r) => r.masterId === m.id && !isDown(r)));
  const down = nodes.filter(isDown).map((n) => `${n.addr} (${describeNode(n, nodes)})`);
  const facts = `every slot served by ${masters.length} masters; ${nodes.length - masters.length} other node(s)`;
  const problems = [
    ...(down.length ? [`down: ${down.join(', ')}`] : []),
    ...listedDown.filter((m) => !down.some((d) => m.includes(d.split(' ')[0] ?? '-'))),
    ...(lone.length
      ? [
          `master${lone.length > 1 ? 's' : ''} without a replica: ${lone.map((m) => m.addr).join(', ')} (its loss leaves slots unserved: no failover)`,
        ]
      : []),
  ];
  if (problems.length === 0) return t.pass(`${facts}; every master has a replica`);
  return t.warn(
    `${facts}; ${problems.join('; ')}`,
    lone.length
      ? 'give every master a replica (redis-cli --cluster add-node NEW EXISTING --cluster-slave), or bring the failed node back'
      : 'bring the failed node back, or remove it (redis-cli --cluster del-node) and from REDIS_URL',
  );
}

/**
 * A Redis Cluster: the start-up check of every command (every listed node answers, every slot
 * served, every master reachable, the user's rights), then each master's facts judged as a
 * single Redis's, the worst answer of each check kept (naming its node).
 */
async function checkRedisCluster(url: string, o: CheckRedisOptions): Promise<CheckResult[]> {
  const c = checkOf('redis', 'Redis');
  const rights = checkOf('redis.rights', 'Redis user rights');
  const listedDown: string[] = [];
  try {
    await checkCluster(url, { redisCluster: true, timeoutMs: o.timeoutMs, prefix: o.prefix, onWarning: (m) => listedDown.push(m) });
  } catch (err) {
    const message = messageOf(err);
    if (errorCode(err) === 'REDIS_FORBIDDEN') {
      return [
        c.warn(`cluster reachable at ${redactUrl(url)}; version, policy and persistence not read`, 'see redis.rights'),
        rights.fail(message, `grant the user what the message names (docs/fleet.md)`),
      ];
    }
    return [c.fail(message, 'fix what the message names (docs/fleet.md, "Redis Cluster")')];
  }
  const cluster = openClusterProbe(url, o.timeoutMs, { lazyConnect: true });
  cluster.on('error', () => undefined);
  const close = (): void => cluster.disconnect();
  o.signal.addEventListener('abort', close, { once: true });
  try {
    await cluster.connect();
    const masters = cluster.nodes('master');
    const judged = new Map<string, CheckResult>();
    for (const node of masters) {
      for (const result of judgeRedis(await readFacts(node, `${node.options.host}:${node.options.port}`))) {
        const before = judged.get(result.id);
        judged.set(result.id, before ? worst(before, result) : result);
      }
    }
    const redis = judged.get('redis');
    if (redis?.status === 'pass')
      judged.set('redis', c.pass(`Redis Cluster at ${redactUrl(url)}: ${masters.length} masters, every slot served; ${redis.detail}`));
    const first = masters[0];
    const topology = first ? await judgeTopology(first, listedDown) : undefined;
    return [...judged.values(), ...(topology ? [topology] : []), rights.pass(rightsGranted(o.prefix))];
  } finally {
    o.signal.removeEventListener('abort', close);
    close();
  }
}
