import type { Client } from '@elastic/elasticsearch';
import { createElasticsearchClient, parseElasticsearchSpec, type ElasticsearchConnectionOptions } from './createElasticsearchClient.js';
import { SandtrailError } from '../../errors/index.js';
import type { RetentionDays } from '../Retention.js';
import { ElasticsearchArtefactLog } from './ElasticsearchArtefactLog.js';
import { ElasticsearchBatchLog } from './ElasticsearchBatchLog.js';
import { ElasticsearchDeadLetterStore } from './ElasticsearchDeadLetterStore.js';
import { ElasticsearchHuntReader } from './ElasticsearchHuntReader.js';
import { ElasticsearchPrivateFileStore } from './ElasticsearchPrivateFileStore.js';
import { ElasticsearchRetention } from './ElasticsearchRetention.js';
import { ElasticsearchSink } from './ElasticsearchSink.js';
import { ElasticsearchCollectionStore } from './ElasticsearchCollectionStore.js';
import { ElasticsearchWatchStore } from './ElasticsearchWatchStore.js';
import { esNames, isValidPrefix } from './names.js';
import { classifyRequestError, errorType, storeFailure } from './classify.js';
import { setupElasticsearch, type SetupOptions } from './setup.js';
import { clusterVersion } from './ilm.js';
import { layoutRefusal, shardBudget, type ShardBudget } from './shardBudget.js';
import { clusterState } from './clusterState.js';
import type { ClusterState } from '../Store.js';

export interface ElasticsearchStoreOptions extends ElasticsearchConnectionOptions {
  indexPrefix?: string;
  flushBytes?: number;
  concurrency?: number;
  /** Run the idempotent setup (templates, alias, bookkeeping indices) before the first write. */
  autoSetup?: boolean;
  /**
   * For commands that read (or change) an existing store: `check` also asks that the read alias
   * exists, so a wrong URL or index prefix is an error naming them, not an empty answer.
   */
  mustExist?: boolean;
  /**
   * `check` also refuses a layout the cluster cannot hold (replicas past its data nodes, a
   * retention window past its shard limit), as one CONFIG_INVALID line naming the fix. Skipped
   * when the credentials lack the `monitor` cluster privilege (es setup and doctor say it then).
   */
  layoutCheck?: boolean;
  /** `refresh` of behaviour and private-file bulk writes (default false). */
  refresh?: boolean | 'wait_for';
  /** `refresh` of dead-letter, batch-log, artefact-log and watch writes (default: each store's own, see EsBookkeepingOptions; `wait_for` held every feed minute for up to the refresh interval). */
  bookkeepingRefresh?: boolean | 'wait_for';
  queryPageSize?: number;
  /** Documents nested deeper are rejected `too_deep`. */
  maxDepth?: number;
  /** Index layout used when setup creates or upgrades indices. */
  index?: Omit<SetupOptions, 'prefix' | 'dryRun' | 'retentionDays'>;
  /**
   * Days a behaviour is kept after its last_modification_date, or off (default): the lifecycle
   * policy's delete phase (installed by setup), and writes of behaviours already past it are skipped.
   */
  retentionDays?: RetentionDays;
  /** The clock retention is judged by (ms since the epoch; default `Date.now`). */
  now?: () => number;
  /** Use this client instead of building one (it is then not closed by `close`). */
  client?: Client;
}

/** How long `check` waits for the cluster's answer. */
const CHECK_TIMEOUT_MS = 10_000;

/** Memoizes an async step; a failure is forgotten so the next call tries again. */
export function once(fn: () => Promise<unknown>): { run: () => Promise<void>; reset: () => void } {
  let p: Promise<void> | undefined;
  return {
    run: () =>
      (p ??= fn().then(
        () => undefined,
        (err: unknown) => {
          p = undefined;
          throw err;
        },
      )),
    reset: () => {
      p = undefined;
    },
  };
}

/** The Elasticsearch backend of a deployment: the same parts as every store, plus its client. */
export interface ElasticsearchStore {
  readonly spec: string;
  sink: ElasticsearchSink;
  dlq: ElasticsearchDeadLetterStore;
  batches: ElasticsearchBatchLog;
  privateFiles: ElasticsearchPrivateFileStore;
  artefacts: ElasticsearchArtefactLog;
  watches: ElasticsearchWatchStore;
  collections: ElasticsearchCollectionStore;
  hunt: ElasticsearchHuntReader;
  retention: ElasticsearchRetention;
  client: Client;
  check(): Promise<void>;
  /** The layout check of `check` (see ElasticsearchStoreOptions.layoutCheck), on its own. */
  checkLayout(): Promise<void>;
  /** The cluster's health, nodes and the store's unassigned shards. */
  clusterState(): Promise<ClusterState>;
  close(): Promise<void>;
}

/**
 * Opens the Elasticsearch backend of a deployment: the behaviour sink, the private-file store,
 * the dead-letter store, the batch log, the artefact log, the hunting reads and retention, all
 * under one index prefix. Synchronous like `openStore`: nothing is sent until the first operation; with `autoSetup` (default) the first
 * write runs the idempotent setup once per process.
 */
export function openElasticsearchStore(specOrUrl: string, options: ElasticsearchStoreOptions = {}): ElasticsearchStore {
  const parsed = parseElasticsearchSpec(specOrUrl);
  const prefix = options.indexPrefix ?? 'sandtrail';
  if (!isValidPrefix(prefix)) {
    throw new SandtrailError(
      'CONFIG_INVALID',
      `elasticsearch.indexPrefix "${prefix}" is not a valid index name prefix (lower-case letters, digits, . _ -; not holding "-behaviours-", whose indices would fall under another prefix's)`,
    );
  }
  const client =
    options.client ??
    createElasticsearchClient(parsed.url, {
      ...options,
      username: options.username ?? parsed.username,
      password: options.password ?? parsed.password,
    });
  // a writer creates what is missing; the deployment's retention and shard layout are es setup's to change
  const setup = once(() =>
    setupElasticsearch(client, { ...options.index, prefix, retentionDays: options.retentionDays, keepDeployment: true }),
  );
  const ready = options.autoSetup === false ? undefined : setup.run;
  const bookkeeping = {
    prefix,
    ...(options.bookkeepingRefresh !== undefined ? { refresh: options.bookkeepingRefresh } : {}),
    ...(ready ? { ready } : {}),
  };
  let closed = false;
  const checkLayout = async (): Promise<void> => {
    const layout = { replicas: options.index?.replicas ?? 'auto', retentionDays: options.retentionDays };
    let budget: ShardBudget;
    try {
      budget = await shardBudget(client, {
        pattern: esNames(prefix).pattern,
        shards: options.index?.shards ?? 1,
        ...layout,
        signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
      });
    } catch (err) {
      // a writer without the monitor privilege: es setup and doctor judge the layout instead
      if (classifyRequestError(err).kind === 'auth') return;
      throw storeFailure(`Elasticsearch at ${parsed.display}`, err);
    }
    const refusal = layoutRefusal(budget, layout);
    if (refusal) throw new SandtrailError('CONFIG_INVALID', refusal);
  };
  const sink = new ElasticsearchSink(client, {
    prefix,
    flushBytes: options.flushBytes,
    concurrency: options.concurrency,
    refresh: options.refresh,
    queryPageSize: options.queryPageSize,
    maxDepth: options.maxDepth,
    retentionDays: options.retentionDays,
    ...(options.now ? { now: options.now } : {}),
    ...(ready ? { ready, onMissingAlias: setup.reset } : {}),
  });
  return {
    spec: parsed.display,
    sink,
    dlq: new ElasticsearchDeadLetterStore(client, bookkeeping),
    batches: new ElasticsearchBatchLog(client, bookkeeping),
    privateFiles: new ElasticsearchPrivateFileStore(client, {
      prefix,
      flushBytes: options.flushBytes,
      refresh: options.refresh,
      queryPageSize: options.queryPageSize,
      maxDepth: options.maxDepth,
      ...(ready ? { ready, onMissingIndex: setup.reset } : {}),
    }),
    artefacts: new ElasticsearchArtefactLog(client, bookkeeping),
    watches: new ElasticsearchWatchStore(client, bookkeeping),
    collections: new ElasticsearchCollectionStore(client, bookkeeping),
    hunt: new ElasticsearchHuntReader(client, { prefix }),
    retention: new ElasticsearchRetention(client, { prefix, onPartitionsDeleted: () => sink.forgetPartitions() }),
    client,
    check: async () => {
      try {
        // one quick question, not the client's usual timeout and retries: a command waits seconds, not minutes
        await clusterVersion(client, { requestTimeout: CHECK_TIMEOUT_MS, maxRetries: 1 });
      } catch (err) {
        const f = classifyRequestError(err);
        if (f.kind === 'auth') throw storeFailure(`Elasticsearch at ${parsed.display}`, err);
        throw new SandtrailError(
          'SINK_UNAVAILABLE',
          `cannot reach Elasticsearch at ${parsed.display}: ${f.reason} (check --store / ELASTICSEARCH_URL)`,
          { code: f.code },
          { cause: err },
        );
      }
      if (options.mustExist) await aliasExists(client, prefix, parsed.display);
      if (options.layoutCheck) await checkLayout();
    },
    checkLayout,
    clusterState: () => clusterState(client, prefix, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) }),
    close: async () => {
      if (closed) return;
      closed = true;
      if (!options.client) await client.close();
    },
  };
}

/**
 * Refuses a cluster holding no store under `prefix` (NOT_FOUND naming the alias), as a read of a
 * missing SQLite file is refused: asked by a count on the read alias, which readers may send.
 */
async function aliasExists(client: Client, prefix: string, display: string): Promise<void> {
  const alias = esNames(prefix).alias;
  try {
    await client.count({ index: alias }, { requestTimeout: CHECK_TIMEOUT_MS, maxRetries: 1 });
  } catch (err) {
    if (errorType(err) !== 'index_not_found_exception') throw storeFailure(`Elasticsearch at ${display}`, err);
    throw new SandtrailError(
      'NOT_FOUND',
      `no store at ${display} under the index prefix "${prefix}": the alias ${alias} does not exist; run sandtrail es setup or a backfill first, or check --store / elasticsearch.indexPrefix`,
      { alias },
    );
  }
}
