import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A redis-server of a test's own, which the test can kill -9 and start again on the same port,
 * with or without its data directory, to prove what survives which Redis failure.
 */
export class RedisServer {
  readonly port: number;
  readonly url: string;
  private dir: string;
  private child: ChildProcess | undefined;

  private constructor(
    port: number,
    private readonly aof: boolean,
    private readonly args: readonly string[] = [],
  ) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
    this.dir = mkdtempSync(join(tmpdir(), 'sandtrail-test-redis-'));
  }

  /** Starts a server; `aof`: appendonly yes with an fsync per write, as docs/reliability.md advises; `args`: more of redis-server's flags (ACL users). */
  static async start(o: { aof: boolean; args?: readonly string[] }): Promise<RedisServer> {
    const s = new RedisServer(await serverPort(), o.aof, o.args);
    await s.launch();
    return s;
  }

  private async launch(): Promise<void> {
    const persistence = this.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    this.child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        ...persistence,
        '--dir',
        this.dir,
        '--maxmemory-policy',
        'noeviction',
        ...this.args,
      ],
      { stdio: 'ignore' },
    );
    let spawnError: Error | undefined;
    this.child.once('error', (e) => (spawnError = e));
    for (let i = 0; i < 200; i++) {
      if (spawnError) throw new Error(`cannot start redis-server (${spawnError.message}); install it: apt-get install redis-server`);
      const r = spawnSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8' });
      if (r.stdout?.trim() === 'PONG') return;
      await sleep(25);
    }
    throw new Error(`redis-server on ${this.port} did not start`);
  }

  /** kill -9, as a crash or an OOM kill would. */
  async kill(): Promise<void> {
    const c = this.child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  }

  /** SIGSTOP: the server keeps its connections and answers nothing, as a frozen host or a silent network drop. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  /** SIGCONT after freeze(). */
  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** Starts again on the same port: with its data (AOF replayed), or `empty` as a fresh server. */
  async restart(o: { empty?: boolean } = {}): Promise<void> {
    await this.kill();
    if (o.empty) {
      rmSync(this.dir, { recursive: true, force: true });
      this.dir = mkdtempSync(join(tmpdir(), 'sandtrail-test-redis-'));
    }
    await this.launch();
  }

  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A TCP port free on loopback right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/**
 * A port for a server a test kills and starts again on the same port: picked at random below the
 * kernel's ephemeral range (32768 and up; a cluster node's bus port, 10000 above, too). A port
 * from listen(0) is an ephemeral one, which a client socket or another test's listen(0) may take
 * in the seconds the server is down, and its restart then fails.
 */
export async function serverPort(): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const port = 10_000 + Math.floor(Math.random() * 12_000);
    if ((await bindable(port)) && (await bindable(port + 10_000))) return port;
  }
  return freePort();
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer()
      .once('error', () => resolve(false))
      .listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
