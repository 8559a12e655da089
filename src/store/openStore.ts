import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SqliteDeadLetterStore, type DeadLetterStore } from '../dlq/index.js';
import { SandtrailError } from '../errors/index.js';
import { SqliteBatchLog, type BatchLog } from '../feed/index.js';
import type { Config } from '../config/index.js';
import { SqliteSink, openElasticsearchStore, type ElasticsearchStore, type Sink } from '../sink/index.js';

/** The three durable parts of a deployment, kept together in one backend. */
export interface Store {
  readonly spec: string;
  sink: Sink;
  dlq: DeadLetterStore;
  batches: BatchLog;
  close(): Promise<void>;
}

/** Backend settings beyond the spec (only the Elasticsearch backend has any). */
export interface StoreSettings {
  elasticsearch?: Partial<Config['elasticsearch']>;
  /** `maxDepth`: documents nested deeper are rejected `too_deep` by every backend. */
  feed?: Partial<Pick<Config['feed'], 'maxDepth'>>;
}

/** True for `es:URL` and `elasticsearch:URL` sink specs. */
export function isElasticsearchSpec(spec: string): boolean {
  return /^(es|elasticsearch):/.test(spec);
}

/** Opens an Elasticsearch store (sink, dead letters, batch log, client) with the configured connection. */
export function openElasticsearch(spec: string, settings: StoreSettings = {}): ElasticsearchStore {
  const es = settings.elasticsearch ?? {};
  return openElasticsearchStore(spec, {
    apiKey: es.apiKey,
    username: es.username,
    password: es.password,
    caFile: es.caFile,
    caFingerprint: es.caFingerprint,
    tlsVerify: es.tlsVerify,
    requestTimeoutMs: es.requestTimeoutMs,
    maxRetries: es.maxRetries,
    compression: es.compression === 'gzip',
    indexPrefix: es.indexPrefix,
    flushBytes: es.flushBytes,
    concurrency: es.bulkConcurrency,
    autoSetup: es.setup !== 'manual',
    maxDepth: settings.feed?.maxDepth,
    index: {
      shards: es.shards,
      replicas: es.replicas,
      refreshInterval: es.refreshInterval,
      totalFieldsLimit: es.totalFieldsLimit,
    },
  });
}

/**
 * Opens the store named by a sink spec: `sqlite:FILE` (created when missing) or `es:URL`
 * (also `elasticsearch:URL`; nothing is sent until the first operation).
 */
export function openStore(spec: string, settings: StoreSettings = {}): Store {
  if (isElasticsearchSpec(spec)) return openElasticsearch(spec, settings);
  if (spec.startsWith('sqlite:')) {
    const file = spec.slice('sqlite:'.length);
    if (!file) throw new SandtrailError('USAGE', 'sqlite: sink needs a file, e.g. --sink sqlite:./sandtrail.db');
    const path = resolve(file);
    mkdirSync(dirname(path), { recursive: true });
    let db: BetterSqlite3.Database;
    try {
      db = new BetterSqlite3(path);
    } catch (err) {
      throw new SandtrailError('SINK_UNAVAILABLE', `cannot open SQLite file ${path}: ${(err as Error).message}`);
    }
    // WAL lets lookups run while a worker writes; several local workers share the file.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 15000');
    let closed = false;
    return {
      spec: `sqlite:${path}`,
      sink: new SqliteSink(db, settings.feed?.maxDepth),
      dlq: new SqliteDeadLetterStore(db),
      batches: new SqliteBatchLog(db),
      close: async () => {
        if (closed) return;
        closed = true;
        db.close();
      },
    };
  }
  throw new SandtrailError('USAGE', `unknown sink "${spec}": expected sqlite:FILE or es:URL`);
}
