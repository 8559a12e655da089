/**
 * The normalizer's output contract: the canonical behaviour document, its pivots, and the
 * typed warnings and rejections. Everything downstream (chunks, sinks, dead-letter store)
 * depends on these shapes, so a change here that alters stored documents must bump
 * SCHEMA_VERSION.
 */
import type { CanonicalAttributes } from './CanonicalAttributes.js';

/** Version of the canonical document shape; stored on every doc so sinks can migrate. */
export const SCHEMA_VERSION = 1;

/**
 * Why a line was refused. `line_too_long` and `invalid_utf8` are produced by the line reader
 * before the normalizer runs; they live here so the dead-letter store has one code table.
 */
export type RejectCode =
  | 'not_json'
  | 'not_object'
  | 'too_deep'
  | 'missing_id'
  | 'bad_id'
  | 'wrong_type'
  | 'bad_attributes'
  | 'line_too_long'
  | 'invalid_utf8'
  | 'unserializable';

/** Every reject code, in a stable order (for CLI filters, metrics labels, docs). */
export const REJECT_CODES: readonly RejectCode[] = Object.freeze([
  'not_json',
  'not_object',
  'too_deep',
  'missing_id',
  'bad_id',
  'wrong_type',
  'bad_attributes',
  'line_too_long',
  'invalid_utf8',
  'unserializable',
]);

/** A refused record: stable code, JSON path of the offending value (e.g. `$.id`), human message. */
export interface Rejection {
  code: RejectCode;
  path: string;
  message: string;
}

/**
 * What a warning reports. Warnings never stop a record; they make every lenient repair visible.
 * - `coerced_scalar`    a value changed type: scalar wrapped in a list, number stringified,
 *                       numeric string / float turned into an integer, "true"/1 into a boolean
 * - `dropped_item`      a list item (or map value) of an unusable type was removed
 * - `dropped_field`     a known field had an unusable type and was removed (or, for fields the
 *                       canonical form always carries, replaced by its empty value)
 * - `renamed_field`     `ids_results` folded into `ids_alerts`
 * - `lowercased`        a hash (or the id's hex part) was upper-case
 * - `missing_date`      `last_modification_date` absent: fell back to `analysis_date`, then the
 *                       batch minute's start (NormalizeOptions.undatedAt), then 0
 * - `missing_attributes` the record had no `attributes`
 * - `sandbox_mismatch`  `attributes.sandbox_name` disagrees with the id's sandbox part
 * - `depth_limit`       a process-tree subtree below the depth limit was dropped
 * - `warnings_truncated` more warnings than the per-record cap; the count is in the message
 */
export type WarningCode =
  | 'coerced_scalar'
  | 'dropped_item'
  | 'dropped_field'
  | 'renamed_field'
  | 'lowercased'
  | 'missing_date'
  | 'missing_attributes'
  | 'sandbox_mismatch'
  | 'depth_limit'
  | 'warnings_truncated';

/** Every warning code, in a stable order. */
export const WARNING_CODES: readonly WarningCode[] = Object.freeze([
  'coerced_scalar',
  'dropped_item',
  'dropped_field',
  'renamed_field',
  'lowercased',
  'missing_date',
  'missing_attributes',
  'sandbox_mismatch',
  'depth_limit',
  'warnings_truncated',
]);

/** A lenient repair applied to an accepted record; `path` is a JSON path into the input line. */
export interface NormalizeWarning {
  code: WarningCode;
  path: string;
  message: string;
}

/** The values threat hunters pivot on (DESIGN.md §3). All lists are unique, first-seen order. */
export interface Pivots {
  /** `attributes.behash` trimmed and lower-cased; null when absent or blank. */
  behash: string | null;
  /** `sigma_analysis_results[].rule_id`, trimmed, original case. */
  sigma_rule_ids: string[];
  /** Trimmed, lower-case JA3 digests: `ja3_digests` then `tls[].ja3`. */
  ja3: string[];
  /** Trimmed, lower-case `tls[].ja3s`. */
  ja3s: string[];
  /** Lower-case `files_dropped[].sha256` that are valid 64-hex SHA-256 digests. */
  dropped_sha256: string[];
}

/** One canonical sandbox behaviour report. Sinks upsert it by `id`, newest `last_modification_date` wins. */
export interface BehaviourDoc {
  schema_version: typeof SCHEMA_VERSION;
  /** `${sha256}_${sandbox part of the input id, verbatim}`. */
  id: string;
  /** 64 lower-case hex characters, from the id. */
  sha256: string;
  sandbox_name: string;
  /** Epoch seconds, or null when the report has none. */
  analysis_date: number | null;
  /** Epoch seconds; falls back to `analysis_date`, then the batch minute's start, then 0 (with a `missing_date` warning). */
  last_modification_date: number;
  attributes: CanonicalAttributes;
  /** Feed-line extras (artefact links, file hashes with md5/sha1 lower-cased). */
  context_attributes?: Record<string, unknown>;
  /** Kept as given when an object. */
  relationships?: Record<string, unknown>;
  pivots: Pivots;
}

/** Outcome of normalizing one record: a doc plus its warnings, or a rejection. */
export type NormalizeResult =
  | {
      ok: true;
      doc: BehaviourDoc;
      warnings: NormalizeWarning[];
      /** Deepest nesting of the input record (objects and arrays), within the limit that was applied. */
      depth: number;
    }
  | { ok: false; rejection: Rejection };
