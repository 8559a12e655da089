import type { Client, estypes } from '@elastic/elasticsearch';
import type { ItemResult } from '../Sink.js';
import { classifyItem, classifyRequestError, esStoreFault, versionConflict, type EsErrorCause, type EsStoreFault } from './classify.js';

/** A copy of a document in one index, and the external version a delete of it carries. */
export interface CopyDelete {
  index: string;
  /** The `version` of the delete action (`external_gte`: it removes the copy only if it is not newer). */
  version: number;
}

/**
 * One document ready for a bulk request, already serialized: its index action and source, then
 * the delete actions of its copies in other indices. A group without an index action (a stale
 * write that only removes duplicates) keeps the result it was given.
 */
export interface PreparedItem {
  /** Position in the caller's array. */
  i: number;
  id: string;
  version: number;
  action?: string;
  /** The document's JSON, encoded once: its size is its length, and the request body is a copy of it. */
  source?: Buffer;
  /** The index the action writes to (the day index of a behaviour). */
  target?: string;
  deletes?: CopyDelete[];
  bytes: number;
}

/** A written document whose delete of an older copy found a newer one there instead (a concurrent writer's). */
export interface Superseded {
  i: number;
  id: string;
  /** Where this write put the document. */
  target: string;
  /** The newer copy's version. */
  version: number;
}

/** What a run of bulk requests found beside the per-item results. */
export interface BulkOutcome {
  /** Refused credentials (reported once, after every item has its result). */
  auth?: { reason: string; err: unknown };
  /** A store fault (a block, a closed index, refused privileges) met by a request or an item. */
  fault?: { fault: EsStoreFault; reason: string; err?: unknown };
  /** An item's index (or the read alias) does not exist. */
  missingIndex: boolean;
  /** Written documents that turned out older than a copy elsewhere. */
  superseded?: Superseded[];
}

const NEWLINE = Buffer.from('\n');
const EMPTY_SOURCE = Buffer.from('{}');

/** The bulk lines of one prepared item: its index action and source, then one delete per older copy. */
function itemLines(p: Omit<PreparedItem, 'bytes'>): Buffer[] {
  const deletes = (p.deletes ?? []).map((d) =>
    Buffer.from(JSON.stringify({ delete: { _index: d.index, _id: p.id, version: d.version, version_type: 'external_gte' } })),
  );
  return [...(p.action !== undefined ? [Buffer.from(p.action), p.source ?? EMPTY_SOURCE] : []), ...deletes];
}

/** Size of an item's bulk lines, newlines included. */
export function itemBytes(p: Omit<PreparedItem, 'bytes'>): number {
  return itemLines(p).reduce((n, l) => n + l.length + 1, 0);
}

/** A chunk's request body: every item's lines, each ended by a newline (one copy of the sources, no re-encoding). */
function bulkBody(chunk: readonly PreparedItem[]): Buffer {
  return Buffer.concat(chunk.flatMap((p) => itemLines(p).flatMap((l) => [l, NEWLINE])));
}

type BulkItem = { status?: number; error?: EsErrorCause; result?: string } | undefined;

/**
 * Sends one chunk as a bulk request and writes each item's result into `results`: a
 * request-level refusal names no item, so the chunk is bisected (never splitting an item's
 * actions) until the culprit stands alone; retryable and auth failures mark the chunk
 * retryable; item errors are classified one by one. An item's result is its index action's,
 * unless the delete of an older copy failed (retryable: sent again, the copy is found again).
 */
export function bulkSender(
  client: Client,
  refresh: estypes.Refresh | undefined,
  results: ItemResult[],
  outcome: BulkOutcome,
): (chunk: PreparedItem[]) => Promise<void> {
  const send = async (chunk: PreparedItem[]): Promise<void> => {
    let resp: estypes.BulkResponse;
    try {
      resp = await client.bulk({
        // a Buffer is sent as it is (the client serializes only arrays of operations)
        operations: bulkBody(chunk) as unknown as estypes.BulkOperationContainer[],
        ...(refresh !== undefined ? { refresh } : {}),
      });
    } catch (err) {
      const f = classifyRequestError(err);
      if ((f.kind === 'rejected' || f.kind === 'too_large') && chunk.length > 1) {
        const half = Math.ceil(chunk.length / 2);
        await send(chunk.slice(0, half));
        await send(chunk.slice(half));
        return;
      }
      if (f.kind === 'auth') outcome.auth ??= { reason: f.reason, err };
      if (f.kind === 'store') outcome.fault ??= { fault: f.fault, reason: f.reason, err };
      const status = f.kind === 'retryable' || f.kind === 'auth' || f.kind === 'store' ? 'retryable' : 'rejected';
      // a group of deletes only keeps its (stale) result: the duplicates go at a later write
      for (const p of chunk) if (p.action !== undefined) results[p.i] = { id: p.id, status, code: f.code, reason: f.reason };
      return;
    }
    let k = 0;
    for (const p of chunk) {
      const indexed = p.action !== undefined ? entryOf(resp.items[k++]) : undefined;
      const deletes = (p.deletes ?? []).map((d) => ({ d, item: entryOf(resp.items[k++]) }));
      if (p.action === undefined) continue;
      const r = itemResult(p, indexed, outcome);
      results[p.i] = r;
      if (r.status !== 'ok' || r.stale) continue;
      for (const { d, item } of deletes) {
        const status = item?.status ?? 0;
        if (!item?.error && status >= 200 && status < 300) continue;
        if (status === 404 && (!item?.error || item.error.type === 'index_not_found_exception')) continue; // already gone
        const newer = status === 409 ? versionConflict(item?.error?.reason) : undefined;
        if (newer && newer.current > d.version) {
          (outcome.superseded ??= []).push({ i: p.i, id: p.id, target: p.target ?? '', version: newer.current });
          break;
        }
        const failed = itemResult(p, item, outcome);
        const reason = failed.status === 'ok' ? 'no result' : failed.reason;
        results[p.i] = {
          id: p.id,
          status: 'retryable',
          code: failed.status === 'ok' ? 'bulk_item_missing' : failed.code,
          reason: `the older copy in ${d.index} was not removed: ${reason}`,
        };
        break;
      }
    }
  };
  return send;
}

function entryOf(entry: Partial<Record<string, estypes.BulkResponseItem>> | undefined): BulkItem {
  return entry ? (Object.values(entry)[0] as BulkItem) : undefined;
}

/** One action's outcome as the item's result, recording refused credentials and store faults in `outcome`. */
function itemResult(p: PreparedItem, item: BulkItem, outcome: BulkOutcome): ItemResult {
  const r = classifyItem(p.id, p.version, item);
  if (r.status === 'retryable' && r.code === 'index_not_found_exception') outcome.missingIndex = true;
  // a user without the write privilege on this index: refused credentials, as for a whole request
  if (r.status !== 'ok' && item?.error?.type === 'security_exception') {
    outcome.auth ??= { reason: r.reason, err: undefined };
    return { ...r, status: 'retryable' };
  }
  const fault = r.status === 'ok' ? undefined : esStoreFault(item?.error);
  // the index's state refused it: the store's fault, never the document's
  if (fault && r.status !== 'ok') {
    outcome.fault ??= { fault, reason: r.reason };
    return { ...r, status: 'retryable' };
  }
  return r;
}

/**
 * Writes whose delete of an older copy met a newer one (a concurrent writer stored a newer
 * version in another day): this write's own copy goes (`external_gte` at the newer version),
 * and the write is stale. If that delete fails the document is sent again, and found again.
 */
export async function dropSuperseded(
  client: Client,
  refresh: estypes.Refresh | undefined,
  superseded: readonly Superseded[],
  results: ItemResult[],
): Promise<void> {
  let items: BulkItem[] = [];
  try {
    const r = await client.bulk({
      operations: superseded.map((s) => ({ delete: { _index: s.target, _id: s.id, version: s.version, version_type: 'external_gte' } })),
      ...(refresh !== undefined ? { refresh } : {}),
    });
    items = r.items.map(entryOf);
  } catch {
    // every one stays retryable below
  }
  superseded.forEach((s, k) => {
    const status = items[k]?.status ?? 0;
    results[s.i] =
      (status >= 200 && status < 300) || status === 404
        ? { id: s.id, status: 'ok', stale: true }
        : {
            id: s.id,
            status: 'retryable',
            code: 'superseded',
            reason: `a newer copy exists and this write's copy in ${s.target} was not removed`,
          };
  });
}

/** Consecutive items in chunks of at most `flushBytes` bytes (a single larger item goes alone). */
export function chunksOf(items: readonly PreparedItem[], flushBytes: number): PreparedItem[][] {
  const chunks: PreparedItem[][] = [];
  let current: PreparedItem[] = [];
  let size = 0;
  for (const p of items) {
    if (current.length > 0 && size + p.bytes > flushBytes) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(p);
    size += p.bytes;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; `fn` must not throw. */
export async function runPool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
