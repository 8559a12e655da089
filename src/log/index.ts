export { createLogger } from './createLogger.js';
export type { Logger } from './createLogger.js';
