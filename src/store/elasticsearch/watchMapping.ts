/**
 * Index design of the watchlist indices, plain JSON sent as-is by setupElasticsearch like
 * mapping.ts:
 * - `<prefix>-watches`: one small document per watch, `_id` = its name (created with op_type
 *   create, so two `watch add` of one name cannot both win). The matcher reads every watch
 *   whole, so only `name` (the list's sort) and the condition fields (for Kibana) are indexed;
 *   `notify` is `enabled: false`: a webhook URL may carry a secret and has no business in an
 *   aggregation.
 * - `<prefix>-watch-hits`: one document per (watch, behaviour, version), `_id` =
 *   `<watch>|<behaviourId>|<lastModified>` created once (a second create answers 409: not new).
 *   `watch` is filtered on, `at` / `last_modified` / `behaviour_id` are the newest-first sort
 *   (behaviour_id makes it unique, as search_after needs).
 * - Values are stored already normalized (hashes lower-case), so plain keywords suffice.
 */
import { MAPPING_VERSION } from './mapping.js';

const keyword = { type: 'keyword', ignore_above: 1024 } as const;
const meta = { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION };

/** Watches index mappings. */
export function watchMappings(): Record<string, unknown> {
  return {
    dynamic: false,
    _meta: meta,
    properties: {
      name: keyword,
      conditions: { properties: { kind: keyword, value: keyword } },
      notify: { type: 'object', enabled: false },
      created_at: { type: 'date', format: 'epoch_millis' },
    },
  };
}

/** Watch-hits index mappings. */
export function watchHitMappings(): Record<string, unknown> {
  return {
    dynamic: false,
    _meta: meta,
    properties: {
      watch: keyword,
      behaviour_id: keyword,
      last_modified: { type: 'date', format: 'epoch_second' },
      sha256: keyword,
      sandbox: keyword,
      matched: { properties: { kind: keyword, value: keyword } },
      at: { type: 'date', format: 'epoch_millis' },
    },
  };
}
