/** What assembles every kind of process: backfills, worker processes, the scheduler, and their one lifecycle. */
export { runBackfill, waitForBackfill } from './runBackfill.js';
export type { BackfillOptions, BackfillOutcome, BackfillProgress } from './runBackfill.js';
export { recordFailures, summarize } from './backfillSummary.js';
export type { BackfillSummary } from './backfillSummary.js';
export { runWorkerProcess } from './runWorkerProcess.js';
export type { WorkerKind } from './runWorkerProcess.js';
export { PROCESS_KINDS } from './processKinds.js';
export type { ProcessKind, ProcessPlan, StageKind, ProducerKind, HookKind } from './processKinds.js';
export { runSchedulerProcess } from './runSchedulerProcess.js';
export { superviseWorkers, closeQueues } from './superviseWorkers.js';
export { JobSettles } from './JobSettles.js';
export type { StageWorker, SuperviseOptions, SuperviseOutcome, ProcessParts } from './superviseWorkers.js';
export { startProcessOps } from './processOps.js';
export { closeProcess } from './closeProcess.js';
export type { ProcessOps } from './processOps.js';
