import type { BehaviourDoc } from '../normalize/index.js';
import type { DocMeta, SinkDoc } from '../wire/index.js';

/** Pivot kinds a hunter can query by. */
export type PivotKind = 'behash' | 'sigma_rule_id' | 'ja3' | 'ja3s' | 'dropped_sha256' | 'sha256';
export const PIVOT_KINDS: readonly PivotKind[] = ['behash', 'sigma_rule_id', 'ja3', 'ja3s', 'dropped_sha256', 'sha256'];

/**
 * Outcome of one document in a batch write. A document older than the stored one is `ok`
 * with `stale: true`: the store already holds the newer state, so the write has converged. A
 * document already past retention is not written either: `stale` and `expired`.
 */
export type ItemResult =
  | { id: string; status: 'ok'; stale?: boolean; expired?: boolean }
  | { id: string; status: 'retryable'; code: string; reason: string }
  | { id: string; status: 'rejected'; code: string; reason: string };

/**
 * Where behaviour documents are indexed. Implementations upsert by behaviour id, never let an
 * older `last_modification_date` replace a newer one, and report per-item results instead of
 * throwing for one bad document (they may throw when the whole store is unreachable).
 */
export interface Sink {
  readonly kind: string;
  upsert(docs: readonly SinkDoc[]): Promise<ItemResult[]>;
  get(id: string): Promise<BehaviourDoc | null>;
  /** Behaviour ids matching a pivot value, sorted; hash values match case-insensitively. */
  query(kind: PivotKind, value: string): Promise<string[]>;
  count(): Promise<number>;
  /**
   * One page of the stored documents `q` selects, newest version of each, in a stable order
   * (the store's own: by id, or by day then id); `cursor` is the previous page's `next`. A page
   * holds at most `limit` documents, and `next` is absent once nothing is left. Memory stays
   * that of one page however many documents match, and no cursor is left open on the store.
   */
  scan(q: ScanQuery, cursor: string | undefined, limit: number): Promise<ScanPage>;
  /** Most frequent values of a pivot (the clusters a hunter starts from), most frequent first. */
  top(kind: Exclude<PivotKind, 'sha256'>, limit: number): Promise<{ value: string; count: number }[]>;
}

/** What `scan` selects: a pivot value, an analysis-date window, both, or neither (everything). */
export interface ScanQuery {
  pivot?: { kind: PivotKind; value: string };
  /** Analysed at or after (epoch seconds); a window leaves out documents with no analysis_date. */
  since?: number;
  /** Analysed before (epoch seconds). */
  until?: number;
}

/** One page of `scan`. */
export interface ScanPage {
  docs: BehaviourDoc[];
  /** The cursor of the next page; absent when this was the last one. */
  next?: string;
}

/** Normalizes a pivot value for lookup: every pivot is a hash or id, compared lower-case. */
export function pivotKey(value: string): string {
  return value.trim().toLowerCase();
}

/**
 * Checks the fields every sink relies on; a document failing this is rejected on its own
 * (code `invalid_document`) instead of failing its chunk.
 */
export function invalidDocReason(meta: unknown): string | undefined {
  const d = meta as Partial<DocMeta> | null;
  if (!d || typeof d !== 'object') return 'document is not an object';
  if (typeof d.id !== 'string' || d.id.length === 0) return 'document has no id';
  if (typeof d.sha256 !== 'string' || typeof d.sandbox_name !== 'string') return 'document has no sha256 or sandbox_name';
  if (!Number.isInteger(d.last_modification_date)) return 'last_modification_date is not an integer';
  if (!d.pivots || typeof d.pivots !== 'object') return 'document has no pivots';
  return undefined;
}

/** Refuses a document nested deeper than `maxDepth` (code `too_deep`), by the depth its meta carries. */
export function depthRejection(meta: DocMeta, maxDepth: number): { code: 'too_deep'; reason: string } | undefined {
  return meta.depth > maxDepth ? { code: 'too_deep', reason: `document is nested more than ${maxDepth} levels deep` } : undefined;
}
