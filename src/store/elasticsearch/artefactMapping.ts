/**
 * Index design of `<prefix>-artefacts`, one small document per downloaded artefact of a
 * behaviour report (`_id` = `<behaviourId>|<kind>`). Plain JSON sent as-is by
 * setupElasticsearch, like mapping.ts:
 * - `dynamic: false`: the record has a fixed shape; anything else stays in `_source` only.
 * - `behaviour_id` is a plain `keyword` (no normalizer): the sandbox name part of the id is
 *   case-sensitive, and `list` is an exact term query on it.
 * - `kind` is a `keyword` because `list` sorts on it (doc values).
 * - `path` is a `keyword` with a large `ignore_above`: blob paths can be long, and one absurd
 *   path must not fail the record (it stays in `_source`).
 */
import { MAPPING_VERSION } from './mapping.js';

const keyword = { type: 'keyword', ignore_above: 1024 } as const;

/** Artefact-log index mappings. */
export function artefactMappings(): Record<string, unknown> {
  return {
    dynamic: false,
    _meta: { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION },
    properties: {
      behaviour_id: keyword,
      kind: keyword,
      path: { type: 'keyword', ignore_above: 8191 },
      size: { type: 'long' },
      sha256: keyword,
      source: keyword,
      fetched_at: { type: 'date', format: 'epoch_millis' },
      // the report version the file belongs to (epoch seconds); absent in records of earlier versions
      last_modified: { type: 'long' },
    },
  };
}
