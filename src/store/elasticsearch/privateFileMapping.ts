/**
 * Index design of `<prefix>-private-files`, one document per privately scanned file (`_id` =
 * its sha256). Plain JSON sent as-is by setupElasticsearch, like mapping.ts, whose decisions it
 * follows:
 * - `dynamic: false` at the root: unknown upstream fields stay in `_source`, never in the mapping.
 * - Hashes are `keyword` with the lower-case normalizer (sha256, sha1, md5), so a term query in
 *   any case matches; `vhash` and `ssdeep` are plain `keyword` (case is significant in both, and
 *   vhash is compared exactly); tags, TrID file types and `magic` are `keyword` so they aggregate.
 *   `magic` also has a `text` sub-field (`magic.text`) for word searches ("PE32 executable").
 * - `ignore_above` on every keyword and `ignore_malformed` on numbers: one absurd value never
 *   costs the whole report.
 * - `exiftool` is `flattened`: its keys are data (one per metadata tag), every value a keyword.
 * - `trid` is a plain object list: hunters filter on one file type at a time, and `nested` would
 *   cost a hidden document per guess.
 * - `gti_assessment` (shape undocumented) and `attributes` (the whole normalized report, unknown
 *   fields included) are `enabled: false`: kept in `_source` and never parsed, so no shape, key
 *   or nesting there can fail a write or grow the mapping.
 */
import { MAPPING_VERSION, NORMALIZER, hashAnalysis, replicaSettings, type Replicas } from './mapping.js';

const keyword = { type: 'keyword', ignore_above: 1024 } as const;
const hash = { type: 'keyword', normalizer: NORMALIZER, ignore_above: 1024 } as const;
const disabled = { type: 'object', enabled: false } as const;

/** Private-file index mappings. */
export function privateFileMappings(): Record<string, unknown> {
  return {
    dynamic: false,
    _meta: { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION },
    properties: {
      schema_version: { type: 'short' },
      type: keyword,
      // doc-values copy of `_id`, the sort key `query` pages on (fielddata on _id is disabled in 8.x)
      id: { type: 'keyword' },
      sha256: hash,
      sha1: hash,
      md5: hash,
      vhash: keyword,
      ssdeep: keyword,
      size: { type: 'long', ignore_malformed: true },
      magic: { ...keyword, fields: { text: { type: 'text' } } },
      tags: keyword,
      exiftool: { type: 'flattened', ignore_above: 1024 },
      trid: { properties: { file_type: keyword, probability: { type: 'float', ignore_malformed: true } } },
      gti_assessment: disabled,
      attributes: disabled,
      fetched_at: { type: 'date', format: 'epoch_second', ignore_malformed: true },
    },
  };
}

/** Settings of the private-file index: the hash normalizer, and the behaviours' shard layout. */
export function privateFileSettings(o: { shards?: number; replicas?: Replicas } = {}): Record<string, unknown> {
  return { index: { number_of_shards: o.shards ?? 1, ...replicaSettings(o.replicas) }, analysis: hashAnalysis() };
}
