import type { ArtefactChoice } from '../queue/index.js';

/** The queue of hash lookups: one job per file hash. */
export { LOOKUP_QUEUE } from '../queue/index.js';

/** Deterministic: a hash enqueued twice (a re-run, a second operator) is one job. */
export const lookupJobId = (hash: string): string => `lookup-${hash}`;

/** The batch-log key of a lookup: its chunks and outcome are recorded under it like a feed minute's. */
export const lookupBatch = (hash: string): string => `lookup-${hash}`;

/** Lookup job data. Never credentials. */
export interface LookupJobData {
  /** Lower-case MD5, SHA-1 or SHA-256. */
  hash: string;
  /** The run that enqueued it: its shared budget (`--max-api-units`) and artefact choice. */
  run: string;
  /** API units the whole run may spend (every worker counts against it in Redis). */
  maxApiUnits?: number;
  /** Artefacts to download through the artefact endpoints for the behaviours found. */
  artefacts?: ArtefactChoice;
  /** The store the run reads its outcomes from (storeIdentity): a worker writing another refuses the job. */
  store?: string;
}

/**
 * How a hash ended: `ok` (reports indexed), `no_behaviours` (known, none), `not_found` (404),
 * `forbidden` (403: the account may not read it), `failed` (an error after every retry),
 * `budget` (stopped by --max-api-units before it was done).
 */
export type LookupOutcome = 'ok' | 'no_behaviours' | 'not_found' | 'forbidden' | 'failed' | 'budget';

export interface LookupJobResult {
  outcome: LookupOutcome;
  /** Reports the API returned. */
  reports: number;
  /** Reports queued for indexing (the rest were dead-lettered). */
  accepted: number;
  rejected: number;
  chunks: number;
  pages: number;
  /** API units spent on this hash (pages and artefact endpoint calls). */
  apiUnits: number;
  error?: string;
}
