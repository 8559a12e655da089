export { openStore, openElasticsearch, isElasticsearchSpec } from './openStore.js';
export type { Store, StoreSettings } from './openStore.js';
