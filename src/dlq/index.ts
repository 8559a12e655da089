export { deadLetterId } from './DeadLetterStore.js';
export type {
  DeadLetter,
  DeadLetterFilter,
  DeadLetterInput,
  DeadLetterStage,
  DeadLetterStore,
  DeadLetterSummary,
} from './DeadLetterStore.js';
export { SqliteDeadLetterStore } from './SqliteDeadLetterStore.js';
export { replayDeadLetters } from './replayDeadLetters.js';
export type { ReplayResult } from './replayDeadLetters.js';
