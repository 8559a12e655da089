import { createRequire } from 'node:module';
import type * as BullMQ from 'bullmq';

/*
 * BullMQ's one home. It is required, not imported: Node 20 imports a CommonJS package into an
 * ES module by lexing every file its index re-exports for their names, which took BullMQ 183 ms
 * to load against 80 ms required (every command that runs workers pays it at start-up). Types
 * come from the package as usual; only these values are taken from the required module.
 */
const bullmq = createRequire(import.meta.url)('bullmq') as typeof BullMQ;

export const Queue = bullmq.Queue;
export type Queue<D = any, R = any, N extends string = string> = BullMQ.Queue<D, R, N>; // eslint-disable-line @typescript-eslint/no-explicit-any
export const Worker = bullmq.Worker;
export type Worker<D = any, R = any, N extends string = string> = BullMQ.Worker<D, R, N>; // eslint-disable-line @typescript-eslint/no-explicit-any
export const DelayedError = bullmq.DelayedError;
export type DelayedError = BullMQ.DelayedError;
export const UnrecoverableError = bullmq.UnrecoverableError;
export type UnrecoverableError = BullMQ.UnrecoverableError;
export type { Job, Processor } from 'bullmq';
