/**
 * The private file report's output contract (GET /private/files/{sha256}): a document type of
 * its own, never mixed with behaviour documents, because it describes a privately scanned file
 * that must stay apart from public data. A change that alters stored documents must bump
 * PRIVATE_FILE_SCHEMA_VERSION (independent of the behaviour document's SCHEMA_VERSION).
 */
import type { NormalizeWarning, Rejection } from './BehaviourDoc.js';

/** Version of the private file document shape; stored on every doc so stores can migrate. */
export const PRIVATE_FILE_SCHEMA_VERSION = 1;

/** One TrID file type guess. */
export interface TridEntry {
  file_type: string;
  probability: number;
}

/** One canonical private file report. Stores upsert it by `id`; the newest `fetched_at` wins. */
export interface PrivateFileDoc {
  schema_version: typeof PRIVATE_FILE_SCHEMA_VERSION;
  type: 'private_file';
  /** The file's SHA-256: 64 lower-case hex characters (the API object id). */
  id: string;
  /** Same as `id`. */
  sha256: string;
  /** 40 lower-case hex characters, or null when absent or invalid. */
  sha1: string | null;
  /** 32 lower-case hex characters, or null when absent or invalid. */
  md5: string | null;
  /** Bytes; null when absent or unusable. */
  size: number | null;
  magic: string | null;
  tags: string[];
  exiftool: Record<string, string>;
  trid: TridEntry[];
  /** Similarity hash, verbatim (compared exactly). */
  vhash: string | null;
  ssdeep: string | null;
  /** Kept whole as the API gave it (present only for requests carrying `x-tool`); null when absent. */
  gti_assessment: unknown;
  /** The normalized attributes, unknown ones included, under the names the API spells them. */
  attributes: Record<string, unknown>;
  /** When sandtrail fetched the report: epoch seconds. */
  fetched_at: number;
}

/** Outcome of normalizing one private file report: a doc plus its warnings, or a rejection. */
export type PrivateFileResult = { ok: true; doc: PrivateFileDoc; warnings: NormalizeWarning[] } | { ok: false; rejection: Rejection };
