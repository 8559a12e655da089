export { GtiClient } from './GtiClient.js';
export type { GtiClientOptions } from './GtiClient.js';
