/** The index stage: stores the documents of a chunk, in groups, and runs retention beside. */
export { IndexWorker } from './IndexWorker.js';
export { IndexStage } from './IndexStage.js';
export type { IndexStageOptions } from './IndexStage.js';
export { UpsertGroup } from './UpsertGroup.js';
export { IndexThread } from './IndexThread.js';
export type { IndexThreadOptions } from './IndexThread.js';
