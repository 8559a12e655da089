import type { Config } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import { openElasticsearchStore, type ElasticsearchStore } from './elasticsearch/index.js';
import { openSqliteStore } from './sqlite/index.js';
import type { Store } from './Store.js';

/** Backend settings beyond the spec (only the Elasticsearch backend has any). */
export interface StoreSettings {
  elasticsearch?: Partial<Config['elasticsearch']>;
  /** `maxDepth`: documents nested deeper are rejected `too_deep` by every backend. */
  feed?: Partial<Pick<Config['feed'], 'maxDepth'>>;
}

/** True for `es:URL` and `elasticsearch:URL` store specs. */
export function isElasticsearchSpec(spec: string): boolean {
  return /^(es|elasticsearch):/.test(spec);
}

/** Opens an Elasticsearch store (sink, private files, dead letters, batch log, artefact log, client) with the configured connection. */
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
 * Opens the store named by a store spec: `sqlite:FILE` (created when missing) or `es:URL`
 * (also `elasticsearch:URL`; nothing is sent until the first operation).
 */
export function openStore(spec: string, settings: StoreSettings = {}): Store {
  if (isElasticsearchSpec(spec)) return openElasticsearch(spec, settings);
  if (spec.startsWith('sqlite:')) return openSqliteStore(spec.slice('sqlite:'.length), { maxDepth: settings.feed?.maxDepth });
  throw new SandtrailError('USAGE', `unknown store "${spec}": expected sqlite:FILE or es:URL`);
}
