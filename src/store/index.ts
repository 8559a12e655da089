export { openStore } from './openStore.js';
export type { Store } from './openStore.js';
