import type { ArtefactLog } from './ArtefactLog.js';
import type { BatchLog } from './BatchLog.js';
import type { DeadLetterStore } from './DeadLetterStore.js';
import type { PrivateFileStore } from './PrivateFileStore.js';
import type { Sink } from './Sink.js';

/**
 * The durable parts of a deployment, kept together in one backend: behaviour documents, private
 * file reports (apart from the public data), dead letters and the batch log.
 */
export interface Store {
  /** The store spec, safe to show (no password). */
  readonly spec: string;
  sink: Sink;
  dlq: DeadLetterStore;
  batches: BatchLog;
  privateFiles: PrivateFileStore;
  /** Downloaded artefacts of behaviour reports (kept beside the reports, shown with them). */
  artefacts: ArtefactLog;
  close(): Promise<void>;
}
