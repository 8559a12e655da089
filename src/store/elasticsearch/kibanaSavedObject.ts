/** The saved-object envelope and the small builders every Kibana object of kibana.ts shares. */

export type SavedObject = {
  type: 'index-pattern' | 'search' | 'visualization' | 'dashboard';
  id: string;
  attributes: Record<string, unknown>;
  references: { id: string; name: string; type: string }[];
  coreMigrationVersion: string;
  typeMigrationVersion: string;
  managed: boolean;
};

/** Format versions the objects are written in; Kibana migrates them forward on import (8.8+ and 9.x). */
export const CORE_VERSION = '8.8.0';
const TYPE_VERSION: Record<SavedObject['type'], string> = {
  'index-pattern': '8.0.0',
  search: '8.0.0',
  visualization: '8.5.0',
  dashboard: '8.9.0',
};

/** A saved object of `type` in the shipped format version. */
export function savedObject(
  type: SavedObject['type'],
  id: string,
  attributes: Record<string, unknown>,
  references: SavedObject['references'] = [],
): SavedObject {
  return { type, id, attributes, references, coreMigrationVersion: CORE_VERSION, typeMigrationVersion: TYPE_VERSION[type], managed: false };
}

/** The search source of a saved search or visualization: a KQL query on the referenced data view. */
export const searchSource = (query: string): string =>
  JSON.stringify({ query: { query, language: 'kuery' }, filter: [], indexRefName: 'kibanaSavedObjectMeta.searchSourceJSON.index' });

/** A Discover URL (relative: Kibana adds its base path) opening `searchId` with a term query on `field`. */
export function pivotUrl(searchId: string, field: string): string {
  return `/app/discover#/view/${searchId}?_a=(query:(language:kuery,query:'${field}:"{{value}}"'))&_g=(time:(from:now-1y,to:now))`;
}

/** A field format rendering the value as a link opening `searchId` with a term query on `field`. */
export function pivotLink(searchId: string, field: string): Record<string, unknown> {
  return { id: 'url', params: { urlTemplate: pivotUrl(searchId, field), labelTemplate: '{{value}}', openLinkInCurrentTab: true } };
}
