import { describeShard, type ClusterState, type Store } from '../../store/index.js';

type Known = Extract<ClusterState, { allowed: true }>;

/** The cluster as status reports it: the store's figures, snake_case as the rest of the report. */
export type ClusterStatus =
  | { allowed: false }
  | (Pick<Known, 'allowed' | 'name' | 'status' | 'nodes' | 'unassigned'> & {
      data_nodes: number;
      unassigned_shards: number;
      store_unassigned_shards: number;
    });

/** The store's cluster, as status shows it. */
export async function clusterStatus(store: Store): Promise<ClusterStatus | null> {
  const c = await store.clusterState?.();
  if (!c) return null;
  if (!c.allowed) return c;
  return {
    allowed: true,
    name: c.name,
    status: c.status,
    nodes: c.nodes,
    data_nodes: c.dataNodes,
    unassigned_shards: c.unassignedShards,
    store_unassigned_shards: c.storeUnassigned,
    unassigned: c.unassigned,
  };
}

/** The status line of a cluster: `green, 3 node(s) (3 data)` and which of the store's shards no node holds. */
export function clusterLine(c: ClusterStatus): string {
  if (!c.allowed) return 'not shown (these credentials lack the monitor cluster privilege)';
  const shards = c.unassigned.map(describeShard);
  const more = c.store_unassigned_shards - shards.length;
  return (
    `${c.name} ${c.status}, ${c.nodes} node(s) (${c.data_nodes} data), ${c.unassigned_shards} unassigned shard(s)` +
    (c.store_unassigned_shards > 0 ? `; the store's: ${shards.join(', ')}${more > 0 ? ` and ${more} more` : ''}` : '')
  );
}
