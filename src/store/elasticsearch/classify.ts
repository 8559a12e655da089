import { SandtrailError, type ErrorCode } from '../../errors/index.js';
import type { ItemResult } from '../Sink.js';

/** The `error` object of a failed bulk item or error response. */
export interface EsErrorCause {
  type?: string;
  reason?: string | null;
  caused_by?: EsErrorCause;
  [key: string]: unknown;
}

/** Request-level statuses after which every item of the request may simply be sent again. */
const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);

/** `type: reason (caused by: type: reason)` of an Elasticsearch error cause. */
export function describeCause(e: EsErrorCause | undefined): string {
  if (!e) return 'unknown error';
  let s = e.reason ? `${e.type ?? 'error'}: ${e.reason}` : (e.type ?? 'error');
  if (e.caused_by) s += ` (caused by ${describeCause(e.caused_by)})`;
  return s;
}

/** A store fault told by an error's type and reason: the cluster's or the index's state, never a document's. */
export interface EsStoreFault {
  fault: ErrorCode;
  /** The words a user searches for. */
  words: string;
  fix: string;
}

/**
 * The Elasticsearch backend's one table of store faults, by `error.type` (and, for blocks, the
 * block the reason names). The flood-stage disk watermark puts a read-only-allow-delete block on
 * every index with a shard on the full node: writes fail with a `cluster_block_exception` (429 in
 * 8.x, 403 before) until disk use falls below the high watermark, when the block is lifted.
 */
export function esStoreFault(e: EsErrorCause | undefined): EsStoreFault | undefined {
  const type = e?.type;
  const reason = e?.reason ?? '';
  if (type === 'cluster_block_exception') {
    // a cluster still recovering its state (503) is unavailable for a moment, not at fault
    if (/SERVICE_UNAVAILABLE|state not recovered|no master/i.test(reason)) return undefined;
    if (/flood[- ]stage|read-only-allow-delete|read_only_allow_delete|disk usage exceeded/i.test(reason))
      return {
        fault: 'STORE_FULL',
        words: 'disk full (flood-stage disk watermark exceeded: the index is read-only)',
        fix: 'free disk space on the data nodes (or add nodes); Elasticsearch lifts the block once disk use falls below the high watermark, then run the same command again',
      };
    return {
      fault: 'STORE_READONLY',
      words: 'index blocked for writes',
      fix: 'remove the block (PUT INDEX/_settings {"index.blocks.write": null, "index.blocks.read_only": null}) or check the cluster-wide read-only setting',
    };
  }
  if (type === 'index_closed_exception')
    return { fault: 'STORE_READONLY', words: 'index closed', fix: 'open it (POST INDEX/_open), then run the same command again' };
  return undefined;
}

/** The typed error of a store fault met while writing to `target` (an index or alias). */
export function esFaultError(f: EsStoreFault, target: string, reason: string, cause?: unknown): SandtrailError {
  return new SandtrailError(f.fault, `${f.words}: Elasticsearch index ${target}: ${reason}; ${f.fix}`, { index: target }, { cause });
}

/**
 * An external_gte conflict as Elasticsearch words it (VersionType.EXTERNAL_GTE,
 * `current version [X] is higher than the one provided [Y]`): the stored and the sent version.
 */
export function versionConflict(reason: string | null | undefined): { current: number; provided: number } | undefined {
  const m = /current version \[(\d+)\] is higher than the one provided \[(\d+)\]/.exec(reason ?? '');
  return m ? { current: Number(m[1]), provided: Number(m[2]) } : undefined;
}

/**
 * One bulk item's outcome. `version` is the external version we sent: a 409 whose stored version
 * is higher than it means the store already holds a newer report (ok, stale); any other conflict
 * (e.g. a document created outside sandtrail with internal versioning) is rejected.
 */
export function classifyItem(id: string, version: number, item: { status?: number; error?: EsErrorCause } | undefined): ItemResult {
  if (!item || typeof item.status !== 'number') {
    return { id, status: 'retryable', code: 'bulk_item_missing', reason: 'Elasticsearch returned no result for this item' };
  }
  const { status, error } = item;
  if (!error && status >= 200 && status < 300) return { id, status: 'ok' };
  const code = error?.type ?? `http_${status}`;
  const reason = describeCause(error) + ` [status ${status}]`;
  if (status === 409 && code === 'version_conflict_engine_exception') {
    const m = versionConflict(error?.reason);
    if (m && m.provided === version && m.current > version) return { id, status: 'ok', stale: true };
    return { id, status: 'rejected', code, reason };
  }
  // the alias or a day index vanished (or was never set up): not the document's fault
  if (status === 404 && code === 'index_not_found_exception') return { id, status: 'retryable', code, reason };
  if (status === 429 || status >= 500) return { id, status: 'retryable', code, reason };
  return { id, status: 'rejected', code, reason };
}

/** What a failed request means for all the items it carried. */
export type RequestFailure =
  | { kind: 'retryable'; code: string; reason: string }
  | { kind: 'rejected'; code: string; reason: string }
  | { kind: 'too_large'; code: string; reason: string }
  | { kind: 'auth'; code: string; reason: string }
  | { kind: 'store'; code: string; reason: string; fault: EsStoreFault };

/**
 * The client's errors are recognised by `name` (what @elastic/transport sets), not `instanceof`:
 * a second copy of the transport package in the tree would defeat `instanceof`.
 */
interface TransportError {
  name: string;
  message: string;
  statusCode?: number;
  body?: unknown;
}
const CONNECTION_ERRORS = new Set(['ConnectionError', 'TimeoutError', 'NoLivingConnectionsError', 'RequestAbortedError']);
const RESPONSE_ERRORS = new Set(['SerializationError', 'DeserializationError']);

function transportError(err: unknown): TransportError | undefined {
  const e = err as Partial<TransportError> | null;
  return e && typeof e === 'object' && typeof e.name === 'string' ? (e as TransportError) : undefined;
}

/** The error as a client `ResponseError` (the server answered with an error status), if it is one. */
function responseError(err: unknown): (TransportError & { statusCode?: number }) | undefined {
  const e = transportError(err);
  return e?.name === 'ResponseError' ? e : undefined;
}

/** Classifies an error thrown by the client for a whole request (bulk, search...). */
export function classifyRequestError(err: unknown): RequestFailure {
  const re = responseError(err);
  if (re) {
    const status = re.statusCode ?? 0;
    const body = re.body as { error?: EsErrorCause | string } | string | undefined;
    const cause: EsErrorCause | undefined =
      typeof body === 'object' && body !== null
        ? typeof body.error === 'object'
          ? body.error
          : { type: `http_${status}`, reason: String(body.error ?? '') || null }
        : { type: `http_${status}`, reason: typeof body === 'string' ? body.slice(0, 500) : null };
    const code = cause?.type ?? `http_${status}`;
    const reason = `${describeCause(cause)} [status ${status}]`;
    // a block or a closed index answers 403/429/400: the index's state, not credentials or load
    const fault = esStoreFault(cause);
    if (fault) return { kind: 'store', code, reason, fault };
    if (RETRYABLE_STATUS.has(status)) return { kind: 'retryable', code: `http_${status}`, reason };
    if (status === 401 || status === 403) return { kind: 'auth', code, reason };
    if (status === 413) return { kind: 'too_large', code: 'request_entity_too_large', reason };
    return { kind: 'rejected', code, reason };
  }
  const te = transportError(err);
  if (te && CONNECTION_ERRORS.has(te.name)) {
    return { kind: 'retryable', code: 'connection_error', reason: `${te.name}: ${te.message}` };
  }
  if (te && RESPONSE_ERRORS.has(te.name)) {
    // a truncated or garbled response: the writes may or may not have happened; resending converges
    return { kind: 'retryable', code: 'bad_response', reason: `${te.name}: ${te.message}` };
  }
  const e = err as { name?: string; message?: string };
  return { kind: 'retryable', code: 'unexpected_error', reason: `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}` };
}

/** The `error.type` of a client ResponseError (e.g. `resource_already_exists_exception`). */
export function errorType(err: unknown): string | undefined {
  return (responseError(err)?.body as { error?: { type?: string } } | undefined)?.error?.type;
}

/** True when a client error is a 404 (missing document or missing index). */
export function isNotFound(err: unknown): boolean {
  return responseError(err)?.statusCode === 404;
}

/** True when a client error says the index (or alias) does not exist. */
export function isIndexNotFound(err: unknown): boolean {
  const re = responseError(err);
  return re?.statusCode === 404 && (re.body as { error?: { type?: string } } | undefined)?.error?.type === 'index_not_found_exception';
}

/**
 * The typed error for a failed bookkeeping or read request (`what op`, e.g. "batch log get"):
 * SINK_AUTH for refused credentials (not retryable), SINK_UNAVAILABLE for what may pass later,
 * SINK_WRITE_FAILED otherwise. SandtrailErrors pass through unchanged.
 */
export function storeFailure(what: string, err: unknown): SandtrailError {
  if (err instanceof SandtrailError) return err;
  const f = classifyRequestError(err);
  if (f.kind === 'store') return esFaultError(f.fault, what, f.reason, err);
  if (f.kind === 'auth') {
    return new SandtrailError(
      'SINK_AUTH',
      `Elasticsearch refused the credentials or privileges (${what}): ${f.reason}`,
      { code: f.code },
      { cause: err },
    );
  }
  const code = f.kind === 'retryable' ? 'SINK_UNAVAILABLE' : 'SINK_WRITE_FAILED';
  return new SandtrailError(code, `${what} failed: ${f.reason}`, { code: f.code }, { cause: err });
}

/** The typed error of a failed read: never a write failure (SINK_UNAVAILABLE instead), so callers retry later or fix the credentials. */
export function readFailure(what: string, err: unknown): SandtrailError {
  const e = storeFailure(what, err);
  return e.code === 'SINK_WRITE_FAILED' ? new SandtrailError('SINK_UNAVAILABLE', e.message, e.details, { cause: err }) : e;
}

/**
 * The typed error of a bookkeeping bulk item that failed (`what`, e.g. "dead-letter store put" on
 * `index`): a block or a closed index is the store fault it is, refused privileges SINK_AUTH,
 * 429/5xx SINK_UNAVAILABLE, anything else SINK_WRITE_FAILED, as for a whole request (storeFailure).
 */
export function itemFailure(what: string, index: string, item: { status?: number; error?: EsErrorCause } | undefined): SandtrailError {
  const status = item?.status ?? 0;
  const reason = `${describeCause(item?.error)} [status ${status}]`;
  const fault = esStoreFault(item?.error);
  if (fault) return esFaultError(fault, index, reason);
  if (status === 401 || status === 403) {
    return new SandtrailError('SINK_AUTH', `Elasticsearch refused the credentials or privileges (${what}): ${reason}`, { status });
  }
  const code = RETRYABLE_STATUS.has(status) ? 'SINK_UNAVAILABLE' : 'SINK_WRITE_FAILED';
  return new SandtrailError(code, `${what} failed: ${reason}`, { status });
}
