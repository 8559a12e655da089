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
    // see checkRedis: a refused connection must not hold the process at disconnect
    disconnectTimeout: 50,
  });
}

/** Fails fast with REDIS_UNAVAILABLE (and no URL credentials in the message) when Redis is unreachable. */
export async function checkRedis(url: string, timeoutMs = 5000): Promise<void> {
  // A refused connection has closed before disconnect() listens for its 'close': ioredis would then
  // hold the process for its disconnectTimeout (2 s by default, every private Redis's start-up)
  const r = new Redis(url, {
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    disconnectTimeout: 50,
  });
  r.on('error', () => undefined);
  try {
    await r.connect();
    await r.ping();
  } catch (err) {
    throw new SandtrailError('REDIS_UNAVAILABLE', `cannot reach Redis at ${redactUrl(url)}: ${(err as Error).message}`);
  } finally {
    r.disconnect();
  }
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
