/**
 * Dead-letter replay: re-runs stored dead letters through the current normalizer and store.
 * The store interfaces and backends live in store/.
 */
export { replayDeadLetters } from './replayDeadLetters.js';
export type { ReplayOptions, ReplayResult } from './replayDeadLetters.js';
