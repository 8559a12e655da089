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

/** Shared collections index mappings: the name sorts the list; the rest is read whole. */
export function collectionMappings(): Record<string, unknown> {
  const unindexed = { type: 'keyword', index: false, doc_values: false } as const;
  return {
    dynamic: false,
    _meta: meta,
    properties: {
      id: keyword,
      name: keyword,
      kind: keyword,
      title: unindexed,
      description: unindexed,
      selection: unindexed,
      created_at: { type: 'date', format: 'epoch_millis' },
      added_through: { type: 'long' },
      synced_from: { type: 'long' },
      lease_until: { type: 'long' },
    },
  };
}

/**
 * Collection objects index mappings: filtered by collection, id, type and version marks, paged
 * by `date_added` (epoch microseconds, a long: a date field would keep milliseconds only); the
 * STIX object itself is kept, never indexed.
 */
export function collectionObjectMappings(): Record<string, unknown> {
  return {
    dynamic: false,
    _meta: meta,
    properties: {
      collection: keyword,
      object_id: keyword,
      type: keyword,
      version: keyword,
      date_added: { type: 'long' },
      first: { type: 'boolean' },
      latest: { type: 'boolean' },
      object: { type: 'object', enabled: false },
    },
  };
}
