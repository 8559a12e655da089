import type { Client } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import { DEFAULT_MAX_DEPTH, type PrivateFileDoc } from '../../normalize/index.js';
import {
  privateFileId,
  privateFileJson,
  privateFileLookupValue,
  resultId,
  type PrivateFileKey,
  type PrivateFileStore,
} from '../PrivateFileStore.js';
import type { ItemResult } from '../Sink.js';
import { classifyRequestError, esFaultError, isIndexNotFound, isNotFound, storeFailure } from './classify.js';
import { bulkSender, type BulkOutcome, type PreparedItem } from './bulkSender.js';
import { esNames } from './names.js';
import { scan } from './scan.js';

export interface ElasticsearchPrivateFileStoreOptions {
  prefix?: string;
  /** Documents nested deeper are rejected `too_deep` (never above Elasticsearch's own 1,000). */
  maxDepth?: number;
  /** Upper bound of one bulk request body, in bytes (a single larger document goes alone). */
  flushBytes?: number;
  /** `refresh` of the bulk requests (default: none; `get` is real-time anyway). */
  refresh?: boolean | 'wait_for';
  /** Page size of `query` (search_after pages; at most 10 000). */
  queryPageSize?: number;
  /** Called before every write; typically the memoized setup. */
  ready?: () => Promise<void>;
  /** Called when a write found the index missing, so `ready` sets it up again. */
  onMissingIndex?: () => void;
}

type Prepared = PreparedItem;

const FIELDS: Readonly<Record<PrivateFileKey, string>> = Object.freeze({ sha256: 'sha256', sha1: 'sha1', md5: 'md5', vhash: 'vhash' });

/**
 * Private file reports in `<prefix>-private-files`, apart from the behaviour alias: one
 * document per file, `_id` = its sha256. Writes are bulk `index` actions carrying
 * `version = fetched_at` with `version_type = external_gte`, as the behaviour sink does with
 * `last_modification_date`: Elasticsearch itself refuses to let an older report replace a newer
 * one (409, reported as ok + stale), and an equal version rewrites the same state. Every item is
 * classified on its own, and a request-level 400/413 is bisected, so one bad document never
 * fails the others.
 */
export class ElasticsearchPrivateFileStore implements PrivateFileStore {
  readonly index: string;
  private readonly flushBytes: number;
  private readonly pageSize: number;

  constructor(
    private readonly client: Client,
    private readonly o: ElasticsearchPrivateFileStoreOptions = {},
  ) {
    this.index = esNames(o.prefix).privateFiles;
    this.flushBytes = Math.max(1024, o.flushBytes ?? 5 * 1024 * 1024);
    this.pageSize = Math.min(10_000, Math.max(1, o.queryPageSize ?? 5000));
  }

  async upsert(docs: readonly PrivateFileDoc[]): Promise<ItemResult[]> {
    const results = new Array<ItemResult>(docs.length);
    const pending: Prepared[] = [];
    docs.forEach((doc, i) => {
      const p = privateFileJson(doc, this.o.maxDepth ?? DEFAULT_MAX_DEPTH);
      if (!('json' in p)) {
        results[i] = { id: resultId(doc), status: 'rejected', ...p };
        return;
      }
      const action = JSON.stringify({ index: { _index: this.index, _id: doc.id, version: doc.fetched_at, version_type: 'external_gte' } });
      const source = Buffer.from(p.json);
      pending.push({ i, id: doc.id, version: doc.fetched_at, action, source, bytes: Buffer.byteLength(action) + source.length + 2 });
    });
    if (pending.length === 0) return results;

    try {
      await this.o.ready?.();
    } catch (err) {
      if (err instanceof SandtrailError) throw err;
      const f = classifyRequestError(err);
      if (f.kind === 'auth') throw authError(f.reason, err);
      if (f.kind === 'store') throw esFaultError(f.fault, this.index, f.reason, err);
      if (f.kind !== 'retryable')
        throw new SandtrailError('SINK_UNAVAILABLE', `Elasticsearch is not ready for writes: ${f.reason}`, {}, { cause: err });
      for (const p of pending) results[p.i] = { id: p.id, status: 'retryable', code: f.code, reason: f.reason };
      return results;
    }

    const outcome: BulkOutcome = { missingIndex: false };
    const send = bulkSender(this.client, this.o.refresh, results, outcome);
    // private file reports come one API call at a time: sequential bulk requests are plenty
    for (const chunk of chunks(pending, this.flushBytes)) await send(chunk);

    if (outcome.missingIndex) this.o.onMissingIndex?.();
    if (outcome.auth) throw authError(outcome.auth.reason, outcome.auth.err);
    if (outcome.fault) throw esFaultError(outcome.fault.fault, this.index, outcome.fault.reason, outcome.fault.err);
    return results;
  }

  async get(sha256: string): Promise<PrivateFileDoc | null> {
    const id = privateFileId(sha256);
    if (id === undefined) return null;
    try {
      const r = await this.client.get<PrivateFileDoc>({ index: this.index, id });
      return r.found && r._source ? r._source : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw readError('get', err);
    }
  }

  /** Sorted ids, read in search_after pages on the `id` keyword (unique and immutable). */
  async query(key: PrivateFileKey, value: string): Promise<string[]> {
    if (!Object.hasOwn(FIELDS, key) || typeof value !== 'string') return [];
    const v = privateFileLookupValue(key, value);
    if (v === '') return [];
    const ids: string[] = [];
    try {
      for await (const h of scan(this.client, {
        index: this.index,
        query: { term: { [FIELDS[key]]: v } },
        sort: [{ id: 'asc' }],
        source: false,
        pageSize: this.pageSize,
      })) {
        ids.push(h.id);
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw readError('query', err);
    }
    return ids;
  }

  async count(): Promise<number> {
    try {
      return (await this.client.count({ index: this.index })).count;
    } catch (err) {
      if (isIndexNotFound(err)) return 0;
      throw readError('count', err);
    }
  }
}

/** Consecutive runs of `items` whose bytes stay under `limit` (a larger single item goes alone). */
function chunks(items: readonly Prepared[], limit: number): Prepared[][] {
  const out: Prepared[][] = [];
  let current: Prepared[] = [];
  let size = 0;
  for (const p of items) {
    if (current.length > 0 && size + p.bytes > limit) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(p);
    size += p.bytes;
  }
  if (current.length > 0) out.push(current);
  return out;
}

function authError(reason: string, cause: unknown): SandtrailError {
  return new SandtrailError('SINK_AUTH', `Elasticsearch refused the credentials or privileges: ${reason}`, {}, { cause });
}

function readError(op: string, err: unknown): SandtrailError {
  const e = storeFailure(`Elasticsearch private files ${op}`, err);
  // a failed read is never a write failure: retry later or fix the credentials
  return e.code === 'SINK_WRITE_FAILED' ? new SandtrailError('SINK_UNAVAILABLE', e.message, e.details, { cause: err }) : e;
}
