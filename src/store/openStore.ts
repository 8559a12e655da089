import { existsSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import { openElasticsearchStore, type ElasticsearchStore } from './elasticsearch/index.js';
import { checkStoreFile, fileIdentity, openSqliteStore } from './sqlite/index.js';
import type { Store } from './Store.js';

/** Backend settings beyond the spec (only the Elasticsearch backend has any). */
export interface StoreSettings {
  elasticsearch?: Partial<Config['elasticsearch']>;
  /** `maxDepth`: documents nested deeper are rejected `too_deep` by every backend. */
  feed?: Partial<Pick<Config['feed'], 'maxDepth'>>;
  /** Retention: writes of behaviours already past it are skipped, Elasticsearch's ILM policy deletes after it. */
  retention?: Partial<Config['retention']>;
  /** SQLite: how long a write waits for another connection's lock. */
  sqlite?: Partial<Config['sqlite']>;
  /** Test seam: the clock retention is judged by (ms since the epoch). */
  now?: () => number;
}

/**
 * How a command uses the store. `readOnly`: it only reads, so the store must exist and is never
 * created, set up, migrated or written (SQLite: a read-only connection; Elasticsearch: no setup).
 * `mustExist`: it changes an existing store only (a missing SQLite file is an error, not a new store).
 * Neither: a store is created when missing (never the directory of a SQLite file).
 */
export interface StoreAccess {
  readOnly?: boolean;
  mustExist?: boolean;
  /** Elasticsearch: `check` refuses a layout the cluster cannot hold (default: for a writer that may create the store; es setup, which changes the layout, does not). */
  layoutCheck?: boolean;
}

/** True for `es:URL` and `elasticsearch:URL` store specs. */
export function isElasticsearchSpec(spec: string): boolean {
  return /^(es|elasticsearch):/.test(spec);
}

/** Opens an Elasticsearch store (sink, private files, dead letters, batch log, artefact log, client) with the configured connection. */
export function openElasticsearch(spec: string, settings: StoreSettings = {}, access: StoreAccess = {}): ElasticsearchStore {
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
    // a read never creates indices: setup runs before writes only, and not at all for a reader
    autoSetup: es.setup !== 'manual' && !access.readOnly,
    mustExist: access.readOnly === true || access.mustExist === true,
    layoutCheck: access.layoutCheck ?? (!access.readOnly && !access.mustExist),
    maxDepth: settings.feed?.maxDepth,
    retentionDays: settings.retention?.days,
    ...(settings.now ? { now: settings.now } : {}),
    index: {
      shards: es.shards,
      replicas: es.replicas,
      refreshInterval: es.refreshInterval,
      totalFieldsLimit: es.totalFieldsLimit,
    },
  });
}

/**
 * Opens the store named by a store spec: `sqlite:FILE` (created when missing unless `access`
 * says otherwise) or `es:URL` (also `elasticsearch:URL`; nothing is sent until the first operation).
 */
export function openStore(spec: string, settings: StoreSettings = {}, access: StoreAccess = {}): Store {
  if (isElasticsearchSpec(spec)) return openElasticsearch(spec, settings, access);
  if (spec.startsWith('sqlite:')) {
    return openSqliteStore(spec.slice('sqlite:'.length), {
      maxDepth: settings.feed?.maxDepth,
      readOnly: access.readOnly,
      mustExist: access.mustExist,
      retentionDays: settings.retention?.days,
      busyTimeoutMs: settings.sqlite?.busyTimeoutMs,
      now: settings.now,
    });
  }
  throw new SandtrailError('USAGE', `unknown store "${spec}": expected sqlite:FILE or es:URL`);
}

/**
 * Whether opening `spec` for writes would create its store: a SQLite file not there yet. Its path
 * is checked as an open checks it (a missing directory, a directory, a file that is no database
 * are refused here), and nothing is created. Elasticsearch: false (its setup makes no store of a
 * failed run).
 */
export function storeWouldBeCreated(spec: string): boolean {
  if (!spec.startsWith('sqlite:') || spec.length === 'sqlite:'.length) return false;
  const path = resolve(spec.slice('sqlite:'.length));
  checkStoreFile(path, {});
  return !existsSync(path);
}

/**
 * The file a SQLite store was opened on, as `device:inode`; undefined for another store or a file
 * not there. A long-lived reader compares it with the path's now: the file removed or replaced
 * (a restore from a backup) leaves it reading the old one.
 */
export function storeFileIdentity(store: Pick<Store, 'spec'>): string | undefined {
  return store.spec.startsWith('sqlite:') ? fileIdentity(store.spec.slice('sqlite:'.length)) : undefined;
}

/**
 * What names a store for the processes of one fleet, where two processes can compare it: a SQLite
 * file's real path (relative paths and symlinks resolved); undefined for Elasticsearch, whose
 * URLs differ from host to host for the same cluster.
 */
export function storeIdentity(store: Pick<Store, 'spec'>): string | undefined {
  if (!store.spec.startsWith('sqlite:')) return undefined;
  const path = store.spec.slice('sqlite:'.length);
  try {
    return `sqlite:${realpathSync(path)}`;
  } catch {
    return store.spec;
  }
}

/**
 * Why a fleet worker refuses a job made for another store (a worker of another directory, or left
 * from an earlier run): `asked` the job's store, `mine` the worker's (storeIdentity); undefined
 * when either is unknown or they are the same. Said before anything is written, the batch log
 * included.
 */
export function otherStoreRefusal(asked: string | undefined, mine: string | undefined, job: string, worker: string): string | undefined {
  if (!asked || !mine || asked === mine) return undefined;
  return `CONFIG_INVALID: ${job} for the store ${asked}, and ${worker} writes ${mine}: give every process on this Redis and queue prefix the same store (an absolute path), or the run a queue prefix of its own`;
}
