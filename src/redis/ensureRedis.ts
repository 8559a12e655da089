import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SandtrailError } from '../errors/index.js';
import { findExecutable } from '../feed/index.js';
import type { Logger } from '../log/index.js';
import { checkRedis } from '../queue/index.js';

/** A Redis to use: the one the operator named, or a private one this process started. */
export interface RedisHandle {
  url: string;
  isPrivate: boolean;
  stop(): Promise<void>;
  /**
   * Lets the process end while a private Redis still runs (it is then killed on exit). For owners
   * that stop it from an 'exit' handler; anyone awaiting `stop()` must not call it.
   */
  unref(): void;
}

export interface EnsureRedisOptions {
  url?: string;
  log?: Logger;
  /** Install Debian's redis-server with apt-get when it is missing and we are root. */
  install?: boolean;
}

const SBIN = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

/**
 * Returns a reachable Redis. With a URL, checks it. Without, starts a private `redis-server`
 * on a free loopback port (never `--daemonize`, which exits 0 even when the port is taken),
 * polling PING until it answers.
 */
export async function ensureRedis(o: EnsureRedisOptions = {}): Promise<RedisHandle> {
  if (o.url) {
    await checkRedis(o.url);
    return { url: o.url, isPrivate: false, stop: async () => undefined, unref: () => undefined };
  }
  const bin = findRedisServer() ?? installRedisServer(o);
  for (let attempt = 0; attempt < 3; attempt++) {
    const handle = await startPrivate(bin).catch(() => undefined);
    if (handle) {
      o.log?.debug({ url: handle.url }, 'private redis-server started');
      return handle;
    }
  }
  throw new SandtrailError('REDIS_UNAVAILABLE', `could not start ${bin} on a loopback port; set REDIS_URL to an existing Redis`);
}

function findRedisServer(): string | undefined {
  return findExecutable('redis-server', `${process.env.PATH ?? ''}:${SBIN.join(':')}`);
}

function installRedisServer(o: EnsureRedisOptions): string {
  const howTo = 'set REDIS_URL to a Redis >= 6.2, or install Debian\'s package: "apt-get install redis-server"';
  const isRoot = process.getuid?.() === 0;
  if (o.install === false || !isRoot || !findExecutable('apt-get')) {
    throw new SandtrailError('REDIS_UNAVAILABLE', `no REDIS_URL given and no redis-server found: ${howTo}`);
  }
  o.log?.warn('redis-server not found: installing Debian package redis-server');
  process.stderr.write('sandtrail: installing redis-server with apt-get (no REDIS_URL given)...\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
  const r = spawnSync('apt-get', ['install', '-y', '-qq', 'redis-server'], { stdio: 'ignore', env });
  const bin = findRedisServer();
  if (r.status !== 0 || !bin) throw new SandtrailError('REDIS_UNAVAILABLE', `installing redis-server failed: ${howTo}`);
  return bin;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function startPrivate(bin: string): Promise<RedisHandle> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sandtrail-redis-'));
  const child: ChildProcess = spawn(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      '--loglevel',
      'warning',
    ],
    { stdio: 'ignore' },
  );
  // Kept referenced: an unref'd child lets Node end the process while `stop()` still awaits its
  // exit, before the caller prints its summary (exit status 13). A process that ends some other
  // way (process.exit on a forced stop) still takes the child with it.
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const killOnExit = (): void => {
    if (!exited) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const url = `redis://127.0.0.1:${port}`;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      // nothing of this Redis outlives the command (no persistence), so there is nothing to flush
      if (!exited) child.kill('SIGKILL');
      await exit;
      process.off('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    })());
  for (let i = 0; i < 100 && !exited; i++) {
    try {
      await checkRedis(url, 500);
      // Without persistence the server never writes to its directory after start-up: remove it
      // now, so not even a process killed by a signal (no 'exit' handler runs) leaves it behind.
      rmSync(dir, { recursive: true, force: true });
      return { url, isPrivate: true, stop, unref: () => child.unref() };
    } catch {
      await sleep(50);
    }
  }
  await stop();
  throw new SandtrailError('REDIS_UNAVAILABLE', `redis-server did not answer on port ${port}`);
}
