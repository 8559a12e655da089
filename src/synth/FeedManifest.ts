import type { MinuteId } from '../minute/index.js';
import type { MalformedKind } from './malformedLine.js';
import type { Compression } from './openBatchWriter.js';
import type { VariantRates, VariantTally } from './VariantRates.js';

/** A planted broken line (1-based line number within its file). */
export interface MalformedEntry {
  line: number;
  kind: MalformedKind;
}

/** One written batch file. */
export interface ManifestFile {
  minute: MinuteId;
  /** Base name inside the output directory, e.g. `202611010000.jsonl.bz2`. */
  file: string;
  /** Lines in the file (every line ends with `\n`). */
  lines: number;
  /** Lines that are valid records: `lines - malformed.length` (lenient-attribute variants count as records). */
  records: number;
  malformed: MalformedEntry[];
  bytesUncompressed: number;
  bytesCompressed: number;
}

/** An id seen again in a later minute with a newer last_modification_date. */
export interface ManifestUpdate {
  /** Canonical id (lower-case sha part). */
  id: string;
  minute: MinuteId;
  line: number;
  lastModificationDate: number;
  /** The occurrence this one supersedes. */
  previous: { minute: MinuteId; line: number; lastModificationDate: number };
}

/** The one oversize line, when asked for. Its id is a valid record and is in `expectedIds`. */
export interface ManifestOversize {
  minute: MinuteId;
  line: number;
  id: string;
  /** Bytes of the line without its newline. */
  bytes: number;
}

/**
 * What a generated feed holds, so tests can assert exactly what a pipeline must end up storing:
 * the store must contain `expectedIds` and nothing else, each updated id with the
 * last_modification_date of its last entry in `updates`.
 */
export interface FeedManifest {
  seed: number | string;
  /** First minute of the range. */
  start: MinuteId;
  /** Minutes in the range, the missing ones included. */
  minutes: number;
  perMinute: number;
  /** Generation options, recorded so the same feed can be regenerated from the manifest. */
  malformedRate: number;
  bigRate: number;
  variantRates: VariantRates;
  compression: Compression;
  /** Program that compressed bz2 files (lbzip2 and bzip2 write different, equally valid bytes). */
  compressor: string | null;
  /** Files hold two concatenated compressed streams each. */
  multiStream: boolean;
  files: ManifestFile[];
  /** Minutes of the range for which no file was written. */
  missing: MinuteId[];
  /** Total valid record lines (updates included). */
  records: number;
  /** Total planted broken lines. */
  malformedLines: number;
  oversize: ManifestOversize | null;
  /** Records showing each variant. */
  variants: VariantTally;
  updates: ManifestUpdate[];
  bytesUncompressed: number;
  bytesCompressed: number;
  /** Sorted unique canonical ids (lower-case sha + '_' + rest). */
  expectedIds: string[];
}
