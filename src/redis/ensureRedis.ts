import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { constants as osConstants, tmpdir } from 'node:os';
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
  /** The queue prefix: a given Redis is checked for the rights the pipeline needs under it. */
  prefix?: string;
  /** `url` names nodes of a Redis Cluster. */
  redisCluster?: boolean;
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
    await checkRedis(o.url, { prefix: o.prefix, redisCluster: o.redisCluster, onWarning: (m) => o.log?.warn(m) });
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

/** Kills of the private servers still running in this process. */
const running = new Set<() => void>();
/**
 * Signals that end a process by default: a private Redis must not outlive it (SIGHUP: the terminal
 * closed; Node resets an inherited ignoring of it, nohup's included, so it always ends the process).
 */
const FATAL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function killAll(): void {
  for (const kill of running) kill();
}

/**
 * A signal this process does not otherwise handle would end it without its 'exit' handlers: the
 * private servers are killed first, then the signal takes its default course. While another
 * listener owns the signal (the workers' supervisor drains on the first SIGINT/SIGTERM, forces on
 * the second), it decides; the 'exit' handler still kills the servers however the process ends.
 */
function onFatalSignal(sig: NodeJS.Signals): void {
  if (process.listenerCount(sig) > 1) return;
  killAll();
  for (const s of FATAL_SIGNALS) process.off(s, onFatalSignal);
  process.off('exit', killAll);
  running.clear();
  process.kill(process.pid, sig);
  // the signal's default action ends the process here; should anything hold it, end as it would have
  process.exit(128 + (osConstants.signals[sig] ?? 1));
}

function watchPrivate(kill: () => void): void {
  if (running.size === 0) {
    process.on('exit', killAll);
    for (const s of FATAL_SIGNALS) process.on(s, onFatalSignal);
  }
  running.add(kill);
}

function unwatchPrivate(kill: () => void): void {
  if (!running.delete(kill) || running.size > 0) return;
  process.off('exit', killAll);
  for (const s of FATAL_SIGNALS) process.off(s, onFatalSignal);
}

/**
 * The private server runs under a small shell whose stdin is a pipe from this process: when this
 * process ends in any way, SIGKILL and the OOM killer included (no handler of its own runs then),
 * the pipe closes, the shell's watcher reads its end and kills the server. The shell exits with
 * the server, so this process still sees the server's exit.
 */
const LIFELINE = [
  'exec 3<&0',
  '"$0" "$@" </dev/null &',
  'r=$!',
  '{ read -r _ <&3; kill -9 "$r" 2>/dev/null; } &',
  'w=$!',
  'wait "$r"',
  's=$?',
  'kill "$w" 2>/dev/null',
  'exit "$s"',
].join('\n');

/**
 * A private server answers about 11 ms after its spawn: it is asked every few milliseconds with a
 * bare PING, not through a Redis client (whose connection and checks took 70 ms), for up to 10 s.
 */
const START_POLL_MS = 5;
const START_WAIT_MS = 10_000;
const PING_TIMEOUT_MS = 500;

/** Does the server on this loopback port answer PING? Never throws. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PING_TIMEOUT_MS, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    let reply = '';
    socket.on('data', (d: Buffer) => {
      reply += d.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
    socket.once('end', () => done(false));
  });
}

/** How long a stop waits for the lifeline to end the server before it kills the group. */
const STOP_WAIT_MS = 2000;

async function startPrivate(bin: string): Promise<RedisHandle> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sandtrail-redis-'));
  const child: ChildProcess = spawn(
    '/bin/sh',
    [
      '-c',
      LIFELINE,
      bin,
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
    // Its own process group: a Ctrl-C on the terminal reaches this process only, which drains its
    // workers against a Redis still up and then stops it (Redis itself would quit at once). Its
    // stdin is the lifeline (LIFELINE).
    { stdio: ['pipe', 'ignore', 'ignore'], detached: true },
  );
  // the lifeline is never written to: an error on it (the shell gone) says nothing the exit does not
  child.stdin?.on('error', () => undefined);
  // Kept referenced: an unref'd child lets Node end the process while `stop()` still awaits its
  // exit, before the caller prints its summary (exit status 13). A process that ends some other
  // way (process.exit on a forced stop, a signal nobody handles) still takes the child with it.
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  // the whole group: the lifeline's shell, the server and the shell's watcher
  const kill = (): void => {
    if (exited || child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  watchPrivate(kill);
  const url = `redis://127.0.0.1:${port}`;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      // nothing of this Redis outlives the command (no persistence), so there is nothing to flush
      // the lifeline: the shell's watcher kills the server and the shell reaps it (a server killed
      // with its shell would be left to init to reap); the whole group goes if that takes long
      child.stdin?.destroy();
      const timer = setTimeout(kill, STOP_WAIT_MS);
      await exit;
      clearTimeout(timer);
      unwatchPrivate(kill);
      rmSync(dir, { recursive: true, force: true });
    })());
  const deadline = Date.now() + START_WAIT_MS;
  while (!exited && Date.now() < deadline) {
    if (await answersPing(port)) {
      // Without persistence the server never writes to its directory after start-up: remove it
      // now, so not even a process killed by a signal (no 'exit' handler runs) leaves it behind.
      rmSync(dir, { recursive: true, force: true });
      return {
        url,
        isPrivate: true,
        stop,
        unref: () => {
          child.unref();
          (child.stdin as Socket | null)?.unref();
        },
      };
    }
    await sleep(START_POLL_MS);
  }
  await stop();
  throw new SandtrailError('REDIS_UNAVAILABLE', `redis-server did not answer on port ${port}`);
}
