export { exitWhenDone, openResources } from './exitWhenDone.js';
export type { ExitWhenDoneOptions } from './exitWhenDone.js';
