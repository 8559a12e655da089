import { lookup } from 'node:dns/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import type { RedisClient } from './connection.js';

/** One line of CLUSTER NODES. */
export interface ClusterNode {
  id: string;
  /** `ip:port` as the cluster announces it. */
  addr: string;
  /** The announced host name (Redis 7 `cluster-announce-hostname`), when there is one. */
  hostname?: string;
  /** `master`, `slave`, `fail`, `fail?`, `myself`, `handshake`, `noaddr`... */
  flags: string[];
  /** The master a replica follows, or undefined for a master. */
  masterId?: string;
  linkState: string;
  /** Slot ranges served (`0-5460`, `7896`), for a master. */
  slots: string[];
}

/** The nodes of a CLUSTER NODES answer. */
export function parseClusterNodes(text: string): ClusterNode[] {
  return text
    .split(/\r?\n/)
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const [id = '', address = '', flags = '', master = '-', , , , linkState = '', ...slots] = line.trim().split(' ');
      const [endpoint = '', hostname] = address.split(',');
      return {
        id,
        addr: endpoint.split('@')[0] ?? '',
        ...(hostname ? { hostname } : {}),
        flags: flags.split(','),
        ...(master !== '-' ? { masterId: master } : {}),
        linkState,
        slots: slots.filter((s) => !s.startsWith('[')),
      };
    });
}

/** The cluster's nodes as one node sees them. */
export async function clusterNodes(r: RedisClient): Promise<ClusterNode[]> {
  return parseClusterNodes(String(await r.call('CLUSTER', 'NODES')));
}

/** Whether the cluster holds the node down (`fail`) or suspects it (`fail?`). */
export function isDown(n: ClusterNode): boolean {
  return n.flags.includes('fail') || n.flags.includes('fail?');
}

/** Whether the node serves `slot`. */
export function servesSlot(n: ClusterNode, slot: number): boolean {
  return n.slots.some((range) => {
    const [a, b = a] = range.split('-').map(Number);
    return a !== undefined && b !== undefined && slot >= a && slot <= b;
  });
}

/** `flags` in words: "a master marked failed", "a replica of 127.0.0.1:7001"... */
export function describeNode(n: ClusterNode, all: readonly ClusterNode[]): string {
  const failed = n.flags.includes('fail') ? ' marked failed' : n.flags.includes('fail?') ? ' suspected down' : '';
  if (n.flags.includes('master')) return `a master${failed}${n.slots.length ? ` (slots ${n.slots.join(' ')})` : ' serving no slot'}`;
  const master = all.find((m) => m.id === n.masterId);
  return `a replica${failed}${master ? ` of ${master.addr}` : ''}`;
}

/** The node of `nodes` a listed URL names: by announced address or host name, else by the URL host's addresses. */
export async function nodeOfUrl(url: string, nodes: readonly ClusterNode[]): Promise<ClusterNode | undefined> {
  const u = new URL(url);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = u.port || '6379';
  const at = (h: string): ClusterNode | undefined =>
    nodes.find((n) => n.addr === `${h}:${port}` || n.addr === `[${h}]:${port}` || (n.hostname === h && n.addr.endsWith(`:${port}`)));
  const direct = at(host);
  if (direct) return direct;
  const addresses = await lookup(host, { all: true }).catch(() => []);
  for (const a of addresses) {
    const found = at(a.address);
    if (found) return found;
  }
  return undefined;
}

/**
 * Why a cluster does not serve, in a line: its state, the masters marked failed that still hold
 * slots (no replica took over), and where the slot of `prefix` (the queues' hash tag) stands.
 */
export async function clusterDiagnosis(r: RedisClient, prefix?: string): Promise<string> {
  const info = String(await r.call('CLUSTER', 'INFO'));
  const state = /cluster_state:(\w+)/.exec(info)?.[1] ?? '?';
  const nodes = await clusterNodes(r);
  const parts = [`cluster_state:${state}`];
  if (prefix !== undefined) {
    const slot = Number(await r.call('CLUSTER', 'KEYSLOT', prefix));
    const holder = nodes.find((n) => n.flags.includes('master') && servesSlot(n, slot));
    parts.push(
      holder
        ? `the queues' slot ${slot} (${prefix}) is on ${holder.addr}${isDown(holder) ? ', its last master, marked failed with no replica to take over' : ''}`
        : `the queues' slot ${slot} (${prefix}) has no master`,
    );
  }
  const lost = nodes.filter((n) => n.flags.includes('master') && isDown(n) && n.slots.length > 0);
  if (lost.length)
    parts.push(`master${lost.length > 1 ? 's' : ''} down with slots: ${lost.map((n) => `${n.addr} (${n.slots.join(' ')})`).join(', ')}`);
  return parts.join('; ');
}

/**
 * clusterDiagnosis through the first node of a cluster connection that answers within
 * `timeoutMs` (the queues' own master may be the one gone), or undefined for a single Redis or
 * when no node answers.
 */
export async function diagnoseConnection(r: RedisClient, prefix: string, timeoutMs = 2000): Promise<string | undefined> {
  if (!(r instanceof Cluster)) return undefined;
  for (const node of r.nodes('all')) {
    const timer = new AbortController();
    const why = await Promise.race([
      clusterDiagnosis(node, prefix).catch(() => undefined),
      sleep(timeoutMs, undefined, { signal: timer.signal }).catch(() => undefined),
    ]);
    timer.abort();
    if (why) return why;
  }
  return undefined;
}
