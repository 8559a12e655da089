import type { Client } from '@elastic/elasticsearch';
import type { ClusterState, UnassignedShard } from '../Store.js';
import { classifyRequestError } from './classify.js';

/**
 * Up to `max` of the shards under `<prefix>-*` that no node holds, with why (a node that left is
 * named by its id in the details), and how many there are in all. An empty list when the cat API
 * is refused or fails: the explanation is a courtesy, the health figures stand without it.
 */
export async function unassignedShards(
  client: Client,
  prefix: string,
  o: { signal?: AbortSignal; max?: number } = {},
): Promise<{ shown: UnassignedShard[]; total: number }> {
  try {
    const rows = (await client.cat.shards(
      { index: `${prefix}-*`, h: ['index', 'shard', 'prirep', 'state', 'unassigned.reason', 'unassigned.details'], format: 'json' },
      o.signal ? { signal: o.signal } : {},
    )) as unknown as Record<string, string | undefined>[];
    const un = rows.filter((r) => r.state === 'UNASSIGNED');
    const shown = un.slice(0, o.max ?? 3).map((r) => ({
      index: r.index ?? '',
      shard: Number(r.shard),
      primary: r.prirep === 'p',
      reason: [r['unassigned.reason'], r['unassigned.details']].filter(Boolean).join(': ') || null,
    }));
    return { shown, total: un.length };
  } catch {
    return { shown: [], total: 0 };
  }
}

/** `idx[0] replica (NODE_LEFT: node_left [id])`, as doctor and status print an unassigned shard. */
export function describeShard(s: UnassignedShard): string {
  return `${s.index}[${s.shard}] ${s.primary ? 'primary' : 'replica'}${s.reason ? ` (${s.reason})` : ''}`;
}

/**
 * The cluster's health as `status` shows it: colour, nodes, unassigned shards and which of the
 * store's they are. Credentials without the `monitor` cluster privilege get `allowed: false`
 * (a reader's API key often has none), not an error.
 */
export async function clusterState(client: Client, prefix: string, o: { signal?: AbortSignal } = {}): Promise<ClusterState> {
  let health;
  try {
    health = await client.cluster.health({}, o.signal ? { signal: o.signal } : {});
  } catch (err) {
    if (classifyRequestError(err).kind === 'auth') return { allowed: false };
    throw err;
  }
  const status = String(health.status).toLowerCase() as 'green' | 'yellow' | 'red';
  const un = status === 'green' ? { shown: [], total: 0 } : await unassignedShards(client, prefix, o);
  return {
    allowed: true,
    name: health.cluster_name,
    status,
    nodes: health.number_of_nodes,
    dataNodes: health.number_of_data_nodes,
    unassignedShards: health.unassigned_shards,
    storeUnassigned: un.total,
    unassigned: un.shown,
  };
}
