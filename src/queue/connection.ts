import { Redis } from 'ioredis';
import { SandtrailError } from '../errors/index.js';

/** A Redis connection as BullMQ workers need it (no per-command retry limit: workers block). */
export function createRedis(url: string): Redis {
  const r = new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false });
  // Connection errors are retried by ioredis and surface through the operations that need Redis.
  r.on('error', () => undefined);
  return r;
}

/**
 * A connection that asks once and never retries (doctor's checks, a ledger read): every command
 * fails within `timeoutMs` when Redis does not answer. With `lazyConnect`, nothing is sent before
 * `connect()`. The caller listens to 'error' (the cause of a refused connection is only there).
 */
export function openRedisProbe(url: string, timeoutMs: number, o: { lazyConnect?: boolean } = {}): Redis {
  return new Redis(url, {
    lazyConnect: o.lazyConnect ?? false,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    // a refused connection has closed before disconnect() listens for its 'close': ioredis would
    // then hold the process for its disconnectTimeout (2 s by default, every private Redis's start-up)
    disconnectTimeout: 50,
    // the rights are asked by checkRedisRights, each with a line that names the fix (ioredis's own
    // check prints to stderr for a user that may not run INFO)
    enableReadyCheck: false,
  });
}

/**
 * Fails fast with REDIS_UNAVAILABLE (and no URL credentials in the message) when Redis is
 * unreachable. With `prefix`, also with REDIS_FORBIDDEN when the connection's user (an ACL user)
 * may not do what the pipeline does there: read the server's INFO (BullMQ checks the version),
 * run scripts, and read and write keys under the queue prefix. Without this, a worker meeting a
 * refusal deep inside BullMQ retries it forever instead of saying so.
 */
export async function checkRedis(url: string, timeoutMs = 5000, prefix?: string): Promise<void> {
  const r = openRedisProbe(url, timeoutMs, { lazyConnect: true });
  // with retries off, connect() may only say "Connection is closed": the 'error' event has the cause (a TLS handshake's)
  let cause: Error | undefined;
  r.on('error', (err: Error) => (cause ??= err));
  try {
    try {
      await r.connect();
      await r.ping();
    } catch (err) {
      const message = (cause ?? (err as Error)).message;
      const fix = redisTlsFix(url, message);
      throw new SandtrailError('REDIS_UNAVAILABLE', `cannot reach Redis at ${redactUrl(url)}: ${message}${fix ? `; ${fix}` : ''}`);
    }
    if (prefix !== undefined) await checkRedisRights(r, url, prefix);
  } finally {
    r.disconnect();
  }
}

/**
 * What the pipeline asks of its Redis user (an ACL user), each asked once: REDIS_FORBIDDEN, naming
 * the grant that fixes it, when one is refused.
 */
export async function checkRedisRights(r: Redis, url: string, prefix: string): Promise<void> {
  const probes: [string, () => Promise<unknown>][] = [
    ['run INFO', () => r.info('server')],
    // a script touching a key under the prefix: scripting and the key pattern in one question
    ['run scripts on keys under its prefix', () => r.eval("return redis.call('exists', KEYS[1])", 1, `${prefix}:access-check`)],
  ];
  for (const [what, probe] of probes) {
    try {
      await probe();
    } catch (err) {
      const message = (err as Error).message;
      if (!/NOPERM/.test(message)) throw err;
      const user = decodeURIComponent(new URL(url).username) || 'default';
      throw new SandtrailError(
        'REDIS_FORBIDDEN',
        `the Redis user "${user}" at ${redactUrl(url)} may not ${what} (${message}); sandtrail needs its keys under "${prefix}:" and the commands of BullMQ: ACL SETUSER ${user} ~${prefix}:* &* +@all -@dangerous +info`,
      );
    }
  }
}

/** The fix of a connection to a `rediss://` URL refused for its server's certificate, or undefined for any other failure. */
export function redisTlsFix(url: string, message: string): string | undefined {
  if (!url.startsWith('rediss:') || !/certificate|self[- ]signed|unable to verify|altnames/i.test(message)) return undefined;
  return 'a certificate of a private CA is trusted with NODE_EXTRA_CA_CERTS=/path/to/ca.pem (docs/fleet.md)';
}

/** Drops the password part of a URL before it is shown anywhere. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable url)';
  }
}
