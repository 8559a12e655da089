import { ELASTICSEARCH_MAX_DEPTH, valueDepth, type PrivateFileDoc } from '../normalize/index.js';
import type { ItemResult } from './Sink.js';

/** Fields a private file can be looked up by. */
export type PrivateFileKey = 'sha256' | 'sha1' | 'md5' | 'vhash';
export const PRIVATE_FILE_KEYS: readonly PrivateFileKey[] = ['sha256', 'sha1', 'md5', 'vhash'];

/**
 * Where private file reports are kept: a table or index of their own, never the behaviour
 * documents', so private scanning data stays apart from public data (its own access rules,
 * its own retention). Every backend of a Store implements it.
 */
export interface PrivateFileStore {
  /**
   * Upsert by id; a report with an older fetched_at never replaces a newer one (the write is
   * `ok` with `stale: true`), an equal one rewrites the same state. Per-item results like
   * Sink.upsert (ItemResult), never throws for one bad doc (may throw when the store is
   * unreachable or refuses the credentials).
   */
  upsert(docs: readonly PrivateFileDoc[]): Promise<ItemResult[]>;
  /** The stored report of a file by its SHA-256 (any case), or null. */
  get(sha256: string): Promise<PrivateFileDoc | null>;
  /** sha256 ids of private files whose field equals value (hashes compared lower-case; vhash exactly), sorted. */
  query(key: PrivateFileKey, value: string): Promise<string[]>;
  count(): Promise<number>;
}

const SHA256_RE = /^[0-9a-f]{64}$/;

/** The stored form of a lookup value: hashes trimmed and lower-cased, vhash as given. */
export function privateFileLookupValue(key: PrivateFileKey, value: string): string {
  return key === 'vhash' ? value : value.trim().toLowerCase();
}

/** The canonical id for `get`, or undefined when `sha256` cannot name a stored report. */
export function privateFileId(sha256: string): string | undefined {
  const id = typeof sha256 === 'string' ? sha256.trim().toLowerCase() : '';
  return SHA256_RE.test(id) ? id : undefined;
}

const nullableString = (v: unknown): boolean => v === null || typeof v === 'string';

/**
 * Checks the fields every private file store relies on (identity, version, lookup columns); a
 * document failing this is rejected on its own (code `invalid_document`).
 */
export function invalidPrivateFileReason(doc: unknown): string | undefined {
  const d = doc as Partial<PrivateFileDoc> | null;
  if (!d || typeof d !== 'object' || Array.isArray(d)) return 'document is not an object';
  if (d.type !== 'private_file') return 'document is not a private_file';
  if (typeof d.id !== 'string' || !SHA256_RE.test(d.id)) return 'id is not a lower-case SHA-256';
  if (d.sha256 !== d.id) return 'sha256 differs from the id';
  if (!Number.isSafeInteger(d.fetched_at) || (d.fetched_at as number) < 0) return 'fetched_at is not a non-negative integer';
  if (!nullableString(d.sha1) || !nullableString(d.md5) || !nullableString(d.vhash)) return 'sha1, md5 or vhash is not a string or null';
  return undefined;
}

/**
 * A per-item refusal (`invalid_document`, `too_deep`, `serialization_failed`), or the
 * document's JSON text. The depth is measured iteratively before serializing, so a document
 * nested past every limit never reaches a recursive serializer.
 */
export function privateFileJson(doc: PrivateFileDoc, maxDepth: number): { json: string } | { code: string; reason: string } {
  let invalid: string | undefined;
  try {
    invalid = invalidPrivateFileReason(doc);
  } catch {
    invalid = 'document could not be read';
  }
  if (invalid) return { code: 'invalid_document', reason: invalid };
  const limit = Math.min(maxDepth, ELASTICSEARCH_MAX_DEPTH);
  let depth: number;
  try {
    depth = valueDepth(doc, limit);
  } catch (err) {
    return { code: 'serialization_failed', reason: (err as Error).message };
  }
  if (depth > limit) return { code: 'too_deep', reason: `document is nested more than ${limit} levels deep` };
  try {
    return { json: JSON.stringify(doc) };
  } catch (err) {
    return { code: 'serialization_failed', reason: (err as Error).message };
  }
}

/** The id a result names for a document that may not even have one. */
export function resultId(doc: unknown): string {
  try {
    const id = (doc as { id?: unknown } | null)?.id;
    return typeof id === 'string' ? id : String(id);
  } catch {
    return 'undefined';
  }
}
