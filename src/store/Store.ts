import type { ArtefactLog } from './ArtefactLog.js';
import type { BatchLog } from './BatchLog.js';
import type { CollectionStore } from './CollectionStore.js';
import type { DeadLetterStore } from './DeadLetterStore.js';
import type { HuntReader } from './HuntReader.js';
import type { PrivateFileStore } from './PrivateFileStore.js';
import type { Retention } from './Retention.js';
import type { Sink } from './Sink.js';
import type { WatchStore } from './WatchStore.js';

/** A shard of the store no node holds, and why (the reason and details Elasticsearch gives). */
export interface UnassignedShard {
  index: string;
  shard: number;
  primary: boolean;
  reason: string | null;
}

/** The health of the cluster behind a store, as `status` shows it; `allowed: false` when the credentials may not ask. */
export type ClusterState =
  | { allowed: false }
  | {
      allowed: true;
      name: string;
      status: 'green' | 'yellow' | 'red';
      nodes: number;
      dataNodes: number;
      /** Every unassigned shard of the cluster. */
      unassignedShards: number;
      /** Of those, the store's own, and the first few of them. */
      storeUnassigned: number;
      unassigned: UnassignedShard[];
    };

/**
 * The durable parts of a deployment, kept together in one backend: behaviour documents, private
 * file reports (apart from the public data), dead letters and the batch log, and the hunting
 * reads over the documents.
 */
export interface Store {
  /** The store spec, safe to show (no password). */
  readonly spec: string;
  sink: Sink;
  dlq: DeadLetterStore;
  batches: BatchLog;
  privateFiles: PrivateFileStore;
  /** Downloaded artefacts of behaviour reports (kept beside the reports, shown with them). */
  artefacts: ArtefactLog;
  /** The hunting reads over the behaviour documents (pivot statistics, top values, related behaviours, file rollups). */
  hunt: HuntReader;
  /** Watchlists and their hits (matched as documents are stored, notified once each). */
  watches: WatchStore;
  /** Shared (TAXII) collections: a watchlist's objects, a saved export's. */
  collections: CollectionStore;
  /** Removal of what retention says is expired (behaviours by their own date, bookkeeping by when it was written). */
  retention: Retention;
  /**
   * Resolves once the store answers; throws its typed error naming it otherwise (SINK_UNAVAILABLE
   * for a cluster that cannot be reached, SINK_AUTH for refused credentials). Commands that write
   * ask it first, so an unreachable store ends them at once instead of failing every batch.
   */
  check(): Promise<void>;
  /**
   * Elasticsearch: refuses (CONFIG_INVALID, one line naming the fix) a replica count or retention
   * window the cluster cannot hold; what `check` asks of a writer, for processes that start
   * without `check` (workers wait for a store that is down instead of ending).
   */
  checkLayout?(): Promise<void>;
  /** Elasticsearch: the cluster's health, its nodes and the store's unassigned shards (absent for a file store). */
  clusterState?(): Promise<ClusterState>;
  close(): Promise<void>;
}
