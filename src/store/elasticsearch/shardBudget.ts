import type { Client } from '@elastic/elasticsearch';
import type { RetentionDays } from '../Retention.js';
import { flatSettings } from './flatSettings.js';
import { effectiveReplicas, type Replicas } from './mapping.js';

/** What the daily partitions will ask of the cluster's shard limit once retention is full. */
export interface ShardBudget {
  /** `cluster.max_shards_per_node` × data nodes: past it the cluster refuses a new index. */
  limit: number;
  /** Open shards now (primaries and replicas, assigned or not), every index of the cluster. */
  open: number;
  /** Of those, the shards of this store's day indices: part of the window, not of what it must fit beside. */
  own: number;
  /** Shards one day index adds: shards × (1 + replicas). */
  perDay: number;
  /** Data nodes, and the replicas a new index gets on them (auto: 1 from two data nodes, 0 on one). */
  dataNodes: number;
  replicas: number;
  /** Day indices kept at once: retention.days + 1 (a day goes whole once all of it is past), or null with retention off. */
  days: number | null;
  /** Shards of the day indices once the retention window is full, null with retention off. */
  atFull: number | null;
  /** Days until the limit is reached at perDay a day, from `open`. */
  daysLeft: number;
  verdict: 'fits' | 'tight' | 'exceeds';
  text: string;
}

/**
 * The shard arithmetic of the daily partitions against the cluster's limit: a cluster refuses a
 * new index past `cluster.max_shards_per_node` × data nodes (replicas counted, assigned or not),
 * and a day index refused stops every write of that day. `tight` when the full window would take
 * more than 80% of what the limit leaves, `exceeds` past it (or, with retention off, always: days
 * accumulate until it is reached).
 */
export async function shardBudget(
  client: Client,
  o: { pattern: string; shards: number; replicas: Replicas; retentionDays: RetentionDays | undefined; signal?: AbortSignal },
): Promise<ShardBudget> {
  const opts = o.signal ? { signal: o.signal } : {};
  const [health, mine, settings] = await Promise.all([
    client.cluster.health({}, opts),
    // a pattern matching no index answers zeros
    client.cluster.health({ index: o.pattern }, opts),
    client.cluster.getSettings({ include_defaults: true, flat_settings: true, filter_path: '**.cluster.max_shards_per_node' }, opts),
  ]);
  const s = settings as { persistent?: unknown; transient?: unknown; defaults?: unknown };
  const raw =
    flatSettings(s.transient)['cluster.max_shards_per_node'] ??
    flatSettings(s.persistent)['cluster.max_shards_per_node'] ??
    flatSettings(s.defaults)['cluster.max_shards_per_node'] ??
    1000;
  const perNode = Number(raw) || 1000;
  const dataNodes = Math.max(1, Number(health.number_of_data_nodes) || 1);
  const limit = perNode * dataNodes;
  const n = (x: number | undefined): number => Number(x) || 0;
  const shardsOf = (h: typeof health): number =>
    n(h.active_shards) + n(h.unassigned_shards) + n(h.initializing_shards) + n(h.relocating_shards);
  const open = shardsOf(health);
  const own = Math.min(open, shardsOf(mine));
  const replicas = effectiveReplicas(o.replicas, dataNodes);
  const perDay = o.shards * (1 + replicas);
  const days = typeof o.retentionDays === 'number' ? o.retentionDays + 1 : null;
  const atFull = days === null ? null : days * perDay;
  const daysLeft = Math.max(0, Math.floor((limit - open) / perDay));
  // the window replaces the store's own day indices: it must fit beside every other index
  const room = limit - (open - own);
  const verdict: ShardBudget['verdict'] = atFull === null || atFull > room ? 'exceeds' : atFull > 0.8 * room ? 'tight' : 'fits';
  const layout = `${o.shards} shard(s) × (1 + ${replicas}${o.replicas === 'auto' ? ' (auto)' : ''} replica(s)) = ${perDay} a day`;
  const cap = `the cluster's limit is ${limit} (cluster.max_shards_per_node ${perNode} × ${dataNodes} data node(s)), ${open} open now`;
  const text =
    atFull === null
      ? `retention off: a new day index every day at ${layout}; ${cap}: new days are refused in about ${daysLeft} days`
      : `${days} day indices at ${layout} = ${atFull} shards once retention is full; ${cap}` +
        (verdict === 'exceeds' ? `: new days are refused in about ${daysLeft} days` : verdict === 'tight' ? ': little room left' : '');
  return { limit, open, own, perDay, dataNodes, replicas, days, atFull, daysLeft, verdict, text };
}

/** The fix to say when the budget does not fit. */
export const SHARD_BUDGET_FIX =
  'lower elasticsearch.shards or elasticsearch.replicas for new days, shorten retention.days, add data nodes, or raise cluster.max_shards_per_node';

/**
 * Why a writer must not start with this layout, as one line naming the fix, or undefined: a
 * replica count the data nodes cannot hold (replicas are never assigned, the cluster stays
 * yellow), or a retention window whose day indices cannot fit the shard limit (a day is refused
 * once it is reached). Retention off is doctor's and es setup's warning, not a refusal.
 */
export function layoutRefusal(b: ShardBudget, o: { replicas: Replicas; retentionDays: RetentionDays | undefined }): string | undefined {
  if (typeof o.replicas === 'number' && o.replicas > b.dataNodes - 1) {
    return (
      `elasticsearch.replicas is ${o.replicas} but the cluster has ${b.dataNodes} data node(s): a replica is never placed on its primary's node, ` +
      `so ${o.replicas > 1 ? 'they stay' : 'it stays'} unassigned and the cluster yellow; set elasticsearch.replicas to auto (or ${b.dataNodes - 1}), or add data nodes`
    );
  }
  if (typeof o.retentionDays === 'number' && b.verdict === 'exceeds') {
    return `the daily partitions cannot fit the cluster's shard limit: ${b.text}; ${SHARD_BUDGET_FIX}`;
  }
  return undefined;
}
