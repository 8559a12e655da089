import type { BatchLog } from './BatchLog.js';
import type { DeadLetterStore } from './DeadLetterStore.js';
import type { Sink } from './Sink.js';

/** The three durable parts of a deployment, kept together in one backend. */
export interface Store {
  /** The store spec, safe to show (no password). */
  readonly spec: string;
  sink: Sink;
  dlq: DeadLetterStore;
  batches: BatchLog;
  close(): Promise<void>;
}
