import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDown, parseClusterNodes, servesSlot } from '../../src/queue/index.js';
import { RedisServer } from './redisServer.js';

/**
 * A Redis Cluster of the test's own: `masters` redis-server processes in cluster mode (and
 * `replicas` for each master), their slots assigned by `redis-cli --cluster create`, as an
 * operator builds one. Each node is a RedisServer, so a test can kill -9 one and start it again.
 */
export class RedisCluster {
  private constructor(readonly nodes: RedisServer[]) {}

  /** The nodes' URLs, comma-separated (as REDIS_URL lists them), with `user:password@` when given. */
  url(auth?: string): string {
    return this.nodes.map((n) => `redis://${auth ? `${auth}@` : ''}127.0.0.1:${n.port}`).join(',');
  }

  static async start(o: { masters?: number; replicas?: number; aof?: boolean; args?: readonly string[] } = {}): Promise<RedisCluster> {
    const args = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000', ...(o.args ?? [])];
    const count = (o.masters ?? 3) * (1 + (o.replicas ?? 0));
    const nodes = await Promise.all(Array.from({ length: count }, () => RedisServer.start({ aof: o.aof ?? false, args })));
    const cluster = new RedisCluster(nodes);
    try {
      const r = spawnSync(
        'redis-cli',
        ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(o.replicas ?? 0), '--cluster-yes'],
        {
          encoding: 'utf8',
        },
      );
      if (r.status !== 0) throw new Error(`redis-cli --cluster create failed: ${r.stdout}${r.stderr}`);
      await cluster.waitServing();
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** Waits until every node says cluster_state:ok (the nodes agree on every slot). */
  async waitServing(timeoutMs = 20_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const states = this.nodes.map((n) => /cluster_state:(\w+)/.exec(this.cli(n, 'CLUSTER', 'INFO'))?.[1]);
      if (states.every((s) => s === 'ok')) return;
      if (Date.now() > until) throw new Error(`the cluster is not serving: ${states.join(', ')}`);
      await sleep(100);
    }
  }

  /**
   * The node serving `key`'s slot as master, as the nodes that answer see it (after a failover:
   * the promoted replica), and whether that master has a replica of its own.
   */
  masterOf(key: string): { node: RedisServer; replicas: number } {
    for (const asked of this.nodes) {
      const slot = Number(this.cli(asked, 'CLUSTER', 'KEYSLOT', key).trim());
      const nodes = parseClusterNodes(this.cli(asked, 'CLUSTER', 'NODES'));
      if (!Number.isInteger(slot) || nodes.length < this.nodes.length) continue;
      const master = nodes.find((n) => n.flags.includes('master') && !isDown(n) && servesSlot(n, slot));
      const node = this.nodes.find((n) => `127.0.0.1:${n.port}` === master?.addr);
      if (master && node) return { node, replicas: nodes.filter((r) => r.masterId === master.id && !isDown(r)).length };
    }
    throw new Error(`no master serves the slot of ${key}`);
  }

  /** Waits until every replica is in sync with its master (`master_link_status:up`). */
  async waitReplicated(timeoutMs = 20_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const links = this.nodes.map((n) => /master_link_status:(\w+)/.exec(this.cli(n, 'INFO', 'replication'))?.[1]);
      if (links.every((l) => l === undefined || l === 'up')) return;
      if (Date.now() > until) throw new Error(`replicas not in sync: ${links.join(', ')}`);
      await sleep(100);
    }
  }

  /** Keys of every node whose name matches `pattern`, per node (SCAN walks one server). */
  keysPerNode(pattern: string): string[][] {
    return this.nodes.map((n) => this.cli(n, '--scan', '--pattern', pattern).split('\n').filter(Boolean));
  }

  /** redis-cli against one node as the default user; its stdout. */
  cli(node: RedisServer, ...args: string[]): string {
    return spawnSync('redis-cli', ['-p', String(node.port), ...args], { encoding: 'utf8' }).stdout ?? '';
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}
