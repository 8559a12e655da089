import { checkOf, type CheckResult } from './CheckResult.js';

/** What doctor read from a reachable Redis; a field is undefined when the server would not say. */
export interface RedisFacts {
  /** The URL with any password masked. */
  display: string;
  /** `redis_version` of INFO server. */
  version?: string;
  /** `maxmemory-policy`, from CONFIG GET, or INFO memory when CONFIG is disabled (renamed away, ACL). */
  policy?: { value: string; via: 'CONFIG GET' | 'INFO memory' };
  /** `aof_enabled` of INFO persistence. */
  aof?: boolean;
  /** CONFIG GET save (`''`: no snapshots); null when CONFIG is disabled. */
  save?: string | null;
  /** Redis TIME minus this host's clock, in ms (round trip halved out). */
  skewMs?: number;
}

/** BullMQ's floor (it uses commands and Lua features of 6.2). */
const MIN_VERSION: readonly [number, number] = [6, 2];
/** Skew bounds: a few seconds shift job-lock and delay arithmetic; half a minute moves minutes between buckets. */
const SKEW_WARN_MS = 2_000;
const SKEW_FAIL_MS = 30_000;

function versionOk(version: string): boolean | undefined {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return undefined;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > MIN_VERSION[0] || (major === MIN_VERSION[0] && minor >= MIN_VERSION[1]);
}

function judgeVersion(f: RedisFacts): CheckResult {
  const c = checkOf('redis', 'Redis');
  const fix = `upgrade to Redis ${MIN_VERSION.join('.')} or later (BullMQ needs it)`;
  if (!f.version) return c.warn(`reachable at ${f.display}, but INFO server gave no redis_version`, fix);
  const ok = versionOk(f.version);
  if (ok === false) return c.fail(`Redis ${f.version} at ${f.display} is older than ${MIN_VERSION.join('.')}`, fix);
  return c.pass(`Redis ${f.version} at ${f.display}`);
}

function judgePolicy(f: RedisFacts): CheckResult {
  const c = checkOf('redis.policy', 'Redis maxmemory-policy');
  const fix =
    'run `CONFIG SET maxmemory-policy noeviction` (redis-cli) and put `maxmemory-policy noeviction` in redis.conf so it survives a restart';
  if (!f.policy) return c.warn('neither CONFIG GET nor INFO memory says which maxmemory-policy is set', fix);
  const { value, via } = f.policy;
  if (value === 'noeviction') return c.pass(`noeviction (${via})`);
  return c.fail(`maxmemory-policy is ${value} (${via}): Redis may evict queued jobs and ledger counters under memory pressure`, fix);
}

function judgePersistence(f: RedisFacts): CheckResult {
  const c = checkOf('redis.persistence', 'Redis persistence');
  const fix = 'run `CONFIG SET appendonly yes` (redis-cli) and put `appendonly yes` in redis.conf, as docker-compose.yml does';
  const lost = 'a fleet loses its queued jobs (and the quota ledger) when this Redis restarts';
  if (f.aof) return c.pass(`AOF on${f.save ? `, RDB snapshots (save "${f.save}")` : ''}`);
  if (f.save) return c.pass(`RDB snapshots (save "${f.save}"); AOF is off: a crash loses the writes since the last snapshot`);
  if (f.aof === undefined) return c.warn(`INFO persistence gave no aof_enabled: persistence unknown; without it ${lost}`, fix);
  if (f.save === null) return c.warn(`AOF is off and CONFIG is disabled, so RDB snapshots cannot be checked; without them ${lost}`, fix);
  return c.warn(`neither AOF nor RDB snapshots: ${lost}`, fix);
}

function judgeClock(f: RedisFacts): CheckResult {
  const c = checkOf('clock', 'Clock skew against Redis');
  const fix = "synchronize this host's and the Redis host's clocks with NTP (e.g. `timedatectl set-ntp true`, chrony)";
  if (f.skewMs === undefined) return c.warn('Redis TIME gave no answer', fix);
  const ms = Math.round(f.skewMs);
  const detail = `this host is ${Math.abs(ms)} ms ${ms >= 0 ? 'behind' : 'ahead of'} Redis`;
  const why = 'job locks, delays and the minute schedule compare both clocks';
  if (Math.abs(ms) > SKEW_FAIL_MS) return c.fail(`${detail}: ${why}`, fix);
  if (Math.abs(ms) > SKEW_WARN_MS) return c.warn(`${detail}: ${why}`, fix);
  return c.pass(detail);
}

/** The Redis checks (version, eviction policy, persistence, clock skew) judged from what the server said; pure. */
export function judgeRedis(f: RedisFacts): CheckResult[] {
  return [judgeVersion(f), judgePolicy(f), judgePersistence(f), judgeClock(f)];
}
