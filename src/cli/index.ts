export { main, buildProgram } from './main.js';
export { runBackfillCommand, formatSummary, backfillExitCode } from './commands/backfill.js';
export type { BackfillArgs, BackfillRun } from './commands/backfill.js';
export { apiUnitsOf } from './budget.js';
export { createProgressReporter, formatEta } from './progress.js';
export { formatLookupSummary, runLookupCommand, lookupExitCode } from './commands/lookup.js';
export type { LookupArgs } from './commands/lookup.js';
export { parseSince } from './sinceFlag.js';
export { escapeControls } from './context.js';
