import type { Client, estypes } from '@elastic/elasticsearch';
import type { ItemResult } from '../Sink.js';
import { classifyItem, classifyRequestError, esStoreFault, type EsErrorCause, type EsStoreFault } from './classify.js';

/** One document ready for a bulk request: its action and source lines, already serialized. */
export interface PreparedItem {
  /** Position in the caller's array. */
  i: number;
  id: string;
  version: number;
  action: string;
  source: string;
  bytes: number;
}

/** What a run of bulk requests found beside the per-item results. */
export interface BulkOutcome {
  /** Refused credentials (reported once, after every item has its result). */
  auth?: { reason: string; err: unknown };
  /** A store fault (a block, a closed index, refused privileges) met by a request or an item. */
  fault?: { fault: EsStoreFault; reason: string; err?: unknown };
  /** An item's index (or write alias) does not exist. */
  missingIndex: boolean;
}

/**
 * Sends one chunk as a bulk request and writes each item's result into `results`: a
 * request-level refusal names no item, so the chunk is bisected until the culprit stands alone;
 * retryable and auth failures mark the chunk retryable; item errors are classified one by one.
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
        operations: chunk.flatMap((p) => [p.action, p.source]) as unknown as estypes.BulkOperationContainer[],
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
      for (const p of chunk) results[p.i] = { id: p.id, status, code: f.code, reason: f.reason };
      return;
    }
    chunk.forEach((p, k) => {
      const entry = resp.items[k];
      const item = entry ? (Object.values(entry)[0] as { status?: number; error?: EsErrorCause } | undefined) : undefined;
      const r = classifyItem(p.id, p.version, item);
      if (r.status === 'retryable' && r.code === 'index_not_found_exception') outcome.missingIndex = true;
      // a user without the write privilege on this index: refused credentials, as for a whole request
      if (r.status !== 'ok' && item?.error?.type === 'security_exception') {
        outcome.auth ??= { reason: r.reason, err: undefined };
        results[p.i] = { ...r, status: 'retryable' };
        return;
      }
      const fault = r.status === 'ok' ? undefined : esStoreFault(item?.error);
      // the index's state refused it: the store's fault, never the document's
      if (fault && r.status !== 'ok') {
        outcome.fault ??= { fault, reason: r.reason };
        results[p.i] = { ...r, status: 'retryable' };
        return;
      }
      results[p.i] = r;
    });
  };
  return send;
}
