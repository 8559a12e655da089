import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { serverPort } from './redisServer.js';

const SCRIPTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../scripts/elasticsearch');

/** The Elasticsearch version the tests run: the one scripts/elasticsearch/pom.xml names. */
export function elasticsearchVersion(): string {
  const pom = readFileSync(join(SCRIPTS, 'pom.xml'), 'utf8');
  const m = /<elasticsearch\.version>([^<]+)<\/elasticsearch\.version>/.exec(pom);
  if (!m?.[1]) throw new Error(`no elasticsearch.version in ${join(SCRIPTS, 'pom.xml')}`);
  return m[1];
}

/** The unpacked distribution's home (scripts/elasticsearch/fetch.sh resolves it from Maven Central once). */
export function elasticsearchHome(version = elasticsearchVersion()): string {
  const r = spawnSync('bash', [join(SCRIPTS, 'fetch.sh'), version], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 600_000,
  });
  if (r.status !== 0) {
    throw new Error(
      `cannot resolve Elasticsearch ${version} (scripts/elasticsearch/fetch.sh exited ${r.status ?? r.signal}): ${r.stderr.trim()}`,
    );
  }
  return r.stdout.trim().split('\n').pop() ?? '';
}

export interface ElasticsearchNodeOptions {
  version?: string;
  /** Heap in MB (-Xms = -Xmx); the tests use at most 1 GB. */
  heapMb?: number;
  clusterName?: string;
  nodeName?: string;
  httpPort?: number;
  transportPort?: number;
  /** Other nodes' transport addresses (host:port), for a cluster of several nodes; none: a single-node cluster. */
  seedHosts?: string[];
  /** Node names that bootstrap a new cluster of several nodes. */
  initialMasterNodes?: string[];
  /** Security on, with this password for the built-in `elastic` superuser (HTTP stays plain). */
  elasticPassword?: string;
  /**
   * Users of the file realm, with their roles (roles.yml, see writeRoles): this distribution cannot
   * create its .security index (its mapping needs the analysis-common module), so native users and
   * roles are not to be had.
   */
  users?: { name: string; password: string; roles: string[] }[];
  /** Role definitions written to roles.yml (the security API's role bodies). */
  roles?: Record<string, unknown>;
  /** More elasticsearch.yml settings. */
  settings?: Record<string, string | number | boolean>;
  startTimeoutMs?: number;
}

/**
 * A real Elasticsearch node, started from the distribution Elastic publishes on Maven Central with
 * its own bin/elasticsearch, on loopback ports, with a data directory of its own. As root it runs
 * as `nobody` (Elasticsearch refuses root). It can be killed with SIGKILL and started again on the
 * same ports and data, as a crashed node would be.
 */
export class ElasticsearchNode {
  readonly url: string;
  readonly transportAddress: string;
  readonly version: string;
  private child: ChildProcess | undefined;
  private readonly dir: string;
  private readonly home: string;

  /** `node.name`, as the cluster's APIs and logs name it. */
  get name(): string {
    return this.o.nodeName;
  }

  private constructor(
    private readonly o: Required<
      Pick<ElasticsearchNodeOptions, 'heapMb' | 'clusterName' | 'nodeName' | 'httpPort' | 'transportPort' | 'startTimeoutMs'>
    > &
      ElasticsearchNodeOptions,
  ) {
    this.version = o.version ?? elasticsearchVersion();
    this.home = elasticsearchHome(this.version);
    this.url = `http://127.0.0.1:${o.httpPort}`;
    this.transportAddress = `127.0.0.1:${o.transportPort}`;
    this.dir = mkdtempSync(join(tmpdir(), 'sandtrail-test-es-'));
    this.configure();
  }

  /** Starts a node and waits until it answers with at least a yellow cluster (bounded by startTimeoutMs). */
  static async start(o: ElasticsearchNodeOptions = {}): Promise<ElasticsearchNode> {
    const node = await ElasticsearchNode.configured(o);
    try {
      await node.launch();
    } catch (err) {
      await node.stop();
      throw err;
    }
    return node;
  }

  /**
   * A cluster of `count` nodes on loopback (names node-1..n, every node master-eligible and a data
   * node, each seeded with the others' transport addresses), started together: a node answers once
   * a majority has joined. Stopped all together by stopAll.
   */
  static async startCluster(
    count: number,
    o: Omit<ElasticsearchNodeOptions, 'nodeName' | 'seedHosts' | 'initialMasterNodes' | 'transportPort'> = {},
  ): Promise<ElasticsearchNode[]> {
    const names = Array.from({ length: count }, (_, i) => `node-${i + 1}`);
    const ports = await Promise.all(names.map(() => serverPort()));
    const seeds = ports.map((p) => `127.0.0.1:${p}`);
    const clusterName = o.clusterName ?? `sandtrail-test-${process.pid}-${Date.now().toString(36)}`;
    const nodes: ElasticsearchNode[] = [];
    try {
      for (const [i, nodeName] of names.entries()) {
        nodes.push(
          await ElasticsearchNode.configured({
            ...o,
            clusterName,
            nodeName,
            transportPort: ports[i],
            seedHosts: seeds,
            initialMasterNodes: names,
          }),
        );
      }
      await Promise.all(nodes.map((n) => n.launch()));
    } catch (err) {
      await ElasticsearchNode.stopAll(nodes);
      throw err;
    }
    return nodes;
  }

  static async stopAll(nodes: readonly ElasticsearchNode[]): Promise<void> {
    await Promise.all(nodes.map((n) => n.stop()));
  }

  private static async configured(o: ElasticsearchNodeOptions): Promise<ElasticsearchNode> {
    return new ElasticsearchNode({
      heapMb: 512,
      clusterName: `sandtrail-test-${process.pid}`,
      nodeName: 'node-1',
      httpPort: o.httpPort ?? (await serverPort()),
      transportPort: o.transportPort ?? (await serverPort()),
      startTimeoutMs: 180_000,
      ...o,
    });
  }

  /** The user the node runs as: root cannot run Elasticsearch, so root hands it to nobody. */
  private static runAs(): { uid: number; gid: number } | undefined {
    if (process.getuid?.() !== 0) return undefined;
    return { uid: 65534, gid: 65534 };
  }

  private configure(): void {
    const conf = join(this.dir, 'config');
    mkdirSync(conf);
    mkdirSync(join(this.dir, 'data'));
    mkdirSync(join(this.dir, 'logs'));
    mkdirSync(join(this.dir, 'tmp'));
    for (const f of readdirSync(join(this.home, 'config'))) {
      if (f.endsWith('.yml') || f.endsWith('.options') || f.endsWith('.properties') || f === 'users' || f === 'users_roles') {
        copyFileSync(join(this.home, 'config', f), join(conf, f));
      }
    }
    mkdirSync(join(conf, 'jvm.options.d'));
    const multi = (this.o.seedHosts?.length ?? 0) > 0;
    const settings: Record<string, string | number | boolean> = {
      'cluster.name': this.o.clusterName,
      'node.name': this.o.nodeName,
      'network.host': '127.0.0.1',
      'http.port': this.o.httpPort,
      'transport.port': this.o.transportPort,
      'path.data': join(this.dir, 'data'),
      'path.logs': join(this.dir, 'logs'),
      'xpack.security.enabled': this.o.elasticPassword !== undefined,
      'xpack.security.http.ssl.enabled': false,
      'xpack.security.transport.ssl.enabled': false,
      // roles.yml changes are seen within a second
      'resource.reload.interval.high': '1s',
      // free-space watermarks in bytes, not percentages: a test machine's disk may be 80% full
      'cluster.routing.allocation.disk.watermark.low': '1gb',
      'cluster.routing.allocation.disk.watermark.high': '512mb',
      'cluster.routing.allocation.disk.watermark.flood_stage': '256mb',
      ...(multi
        ? {
            'discovery.seed_hosts': `[${(this.o.seedHosts ?? []).join(',')}]`,
            'cluster.initial_master_nodes': `[${(this.o.initialMasterNodes ?? []).join(',')}]`,
          }
        : { 'discovery.type': 'single-node' }),
      ...this.o.settings,
    };
    writeFileSync(
      join(conf, 'elasticsearch.yml'),
      Object.entries(settings)
        .map(([k, v]) => `${k}: ${String(v)}\n`)
        .join(''),
    );
    writeFileSync(join(conf, 'jvm.options.d', 'heap.options'), `-Xms${this.o.heapMb}m\n-Xmx${this.o.heapMb}m\n`);
    if (this.o.elasticPassword !== undefined) {
      const r = spawnSync(join(this.home, 'bin', 'elasticsearch-keystore'), ['create'], { env: this.env(), encoding: 'utf8' });
      const add = spawnSync(join(this.home, 'bin', 'elasticsearch-keystore'), ['add', '-x', '--force', 'bootstrap.password'], {
        env: this.env(),
        input: this.o.elasticPassword,
        encoding: 'utf8',
      });
      if (r.status !== 0 || add.status !== 0) throw new Error(`elasticsearch-keystore failed: ${r.stderr}${add.stderr}`);
      for (const u of this.o.users ?? []) {
        const add = spawnSync(
          join(this.home, 'bin', 'elasticsearch-users'),
          ['useradd', u.name, '-p', u.password, '-r', u.roles.join(',')],
          {
            env: this.env(),
            encoding: 'utf8',
          },
        );
        if (add.status !== 0) throw new Error(`elasticsearch-users useradd ${u.name} failed: ${add.stderr}${add.stdout}`);
      }
      this.writeRoles(this.o.roles ?? {});
    }
    const who = ElasticsearchNode.runAs();
    if (who) chownTree(this.dir, who.uid, who.gid);
  }

  /** Replaces roles.yml (JSON is YAML); the node reads it again within a second (resource.reload.interval.high). */
  writeRoles(roles: Record<string, unknown>): void {
    const file = join(this.dir, 'config', 'roles.yml');
    writeFileSync(file, JSON.stringify(roles, null, 2));
    const who = ElasticsearchNode.runAs();
    if (who) chownSync(file, who.uid, who.gid);
  }

  private env(): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: this.dir,
      LANG: 'C.UTF-8',
      ES_JAVA_HOME: javaHome(),
      ES_PATH_CONF: join(this.dir, 'config'),
      ES_TMPDIR: join(this.dir, 'tmp'),
    };
  }

  private async launch(): Promise<void> {
    const who = ElasticsearchNode.runAs();
    const bin = join(this.home, 'bin', 'elasticsearch');
    const pidFile = join(this.dir, 'logs', 'node.pid');
    rmSync(pidFile, { force: true });
    // setpriv keeps the parent-death signal across the user change: if this process dies, the node follows
    const [cmd, args] = who
      ? ['setpriv', [`--reuid=${who.uid}`, `--regid=${who.gid}`, '--clear-groups', '--pdeathsig=TERM', '--', bin, '-p', pidFile]]
      : [bin, ['-p', pidFile]];
    const out = createWriteStream(join(this.dir, 'stdout.log'), { flags: 'a' });
    const child = spawn(cmd, args as string[], { cwd: this.dir, env: this.env(), stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    let exited: string | undefined;
    child.once('exit', (code, signal) => (exited = `exited ${code ?? signal}`));
    child.once('error', (e) => (exited = `could not start (${e.message})`));
    const deadline = Date.now() + this.o.startTimeoutMs;
    for (;;) {
      if (exited) throw new Error(`Elasticsearch ${this.o.nodeName} ${exited} while starting: ${this.lastErrors()}`);
      if (Date.now() > deadline) {
        throw new Error(
          `Elasticsearch ${this.o.nodeName} did not answer on ${this.url} within ${this.o.startTimeoutMs} ms: ${this.lastErrors()}`,
        );
      }
      if (await this.answers()) return;
      await sleep(250);
    }
  }

  private async answers(): Promise<boolean> {
    try {
      const headers: Record<string, string> = this.o.elasticPassword
        ? { authorization: `Basic ${Buffer.from(`elastic:${this.o.elasticPassword}`).toString('base64')}` }
        : {};
      const r = await fetch(`${this.url}/_cluster/health?wait_for_status=yellow&timeout=1s`, {
        headers,
        signal: AbortSignal.timeout(3000),
      });
      await r.arrayBuffer();
      return r.status === 200;
    } catch {
      return false;
    }
  }

  /** The server JVM's pid (bin/elasticsearch runs a launcher that starts the server as its child). */
  serverPid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.dir, 'logs', 'node.pid'), 'utf8').trim());
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  /** The node's log lines that say why it failed, for an error message. */
  lastErrors(): string {
    let text = '';
    try {
      text = readFileSync(join(this.dir, 'stdout.log'), 'utf8');
    } catch {
      return '(no log)';
    }
    const lines = text.split('\n').filter((l) => /\]\[(ERROR|FATAL)\s*\]|^ERROR:|^\S*(Exception|Error)\b/.test(l));
    return (lines.length > 0 ? lines : text.split('\n')).slice(-8).join('\n') || '(empty log)';
  }

  /** SIGKILL to the server JVM, as a crash or an OOM kill would: no flush, no goodbye to the cluster. */
  async kill(): Promise<void> {
    signal(this.serverPid(), 'SIGKILL');
    await this.waitExit(30_000);
  }

  /** Starts again on the same ports and data (after kill() or stop({ keepData: true })). */
  async restart(): Promise<void> {
    if (this.running()) await this.kill();
    await this.launch();
  }

  running(): boolean {
    const c = this.child;
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  /** Waits until the launcher and the server JVM (which holds the launcher's output pipes) are both gone. */
  private async waitExit(ms: number): Promise<boolean> {
    const pid = this.serverPid();
    const deadline = Date.now() + ms;
    while (this.running() || alive(pid)) {
      if (Date.now() > deadline) return false;
      await sleep(50);
    }
    return true;
  }

  /** SIGTERM to the server (a clean shutdown), SIGKILL after 30 s; then removes the data unless `keepData`. Safe to call twice. */
  async stop(o: { keepData?: boolean } = {}): Promise<void> {
    const pid = this.serverPid();
    if (this.running() || alive(pid)) {
      signal(pid, 'SIGTERM');
      if (!alive(pid)) this.child?.kill('SIGTERM');
      if (!(await this.waitExit(30_000))) {
        signal(pid, 'SIGKILL');
        this.child?.kill('SIGKILL');
        await this.waitExit(10_000);
      }
    }
    this.child?.stdout?.destroy();
    this.child?.stderr?.destroy();
    this.child?.stdin?.destroy();
    if (!o.keepData) rmSync(this.dir, { recursive: true, force: true });
  }
}

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

/** The JDK that runs the node: SANDTRAIL_ES_JAVA_HOME, JAVA_HOME, else the `java` on PATH. */
function javaHome(): string {
  const set = process.env.SANDTRAIL_ES_JAVA_HOME ?? process.env.JAVA_HOME;
  if (set && existsSync(join(set, 'bin', 'java'))) return set;
  const r = spawnSync('bash', ['-c', 'readlink -f "$(command -v java)"'], { encoding: 'utf8' });
  const java = r.stdout.trim();
  if (r.status !== 0 || !java) throw new Error('no java on PATH to run Elasticsearch: apt-get install openjdk-17-jre-headless');
  return dirname(dirname(java));
}

function chownTree(path: string, uid: number, gid: number): void {
  chownSync(path, uid, gid);
  for (const e of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, e.name);
    if (e.isDirectory()) chownTree(p, uid, gid);
    else chownSync(p, uid, gid);
  }
}
