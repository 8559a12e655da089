/** Retention in days, or `off` (keep everything); the shape of the `retention.*` settings. */
export type RetentionDays = number | 'off';

/** What one prune call removes: records older than the cutoffs, at most `maxRows` of them. */
export interface PruneOptions {
  /** Behaviours whose `last_modification_date` is before this (Unix seconds) go; absent: none. */
  behavioursBefore?: number;
  /** Dead letters, batch-log rows, watch hits, artefact records and shared collection objects written before this (Unix seconds) go; absent: none. */
  bookkeepingBefore?: number;
  /**
   * Upper bound of the rows (documents) this call removes one by one, so one call is a short step;
   * a whole partition past retention (an Elasticsearch day index) is dropped as a step of its own,
   * whatever it holds, since dropping it costs no more than a small step. Absent: all.
   */
  maxRows?: number;
  /** Count what would go, remove nothing. */
  dryRun?: boolean;
}

/** What a prune call removed (or, in a dry run, would remove). */
export interface PruneReport {
  behaviours: number;
  /** Whole partitions dropped (Elasticsearch indices, SQLite tables). */
  partitions: string[];
  deadLetters: number;
  batches: number;
  watchHits: number;
  artefacts: number;
  /** Objects of the shared (TAXII) collections, by when they were added. */
  sharedObjects: number;
  /** False when `maxRows` ended the call before everything expired was removed. */
  done: boolean;
}

/** Removal of expired records; every backend implements it (one conformance suite). */
export interface Retention {
  prune(o: PruneOptions): Promise<PruneReport>;
  /** The oldest `last_modification_date` (Unix seconds) among the behaviours held; null when none. */
  oldest(): Promise<number | null>;
  /** The newest `last_modification_date` (Unix seconds) among the behaviours held; null when none. */
  newest(): Promise<number | null>;
}

const DAY_SEC = 86_400;

/**
 * The cutoffs (Unix seconds) of a retention setting at `nowMs`: a behaviour is expired when its
 * `last_modification_date` is before `behavioursBefore`; bookkeeping follows `bookkeepingDays`,
 * or `days` when that is unset.
 */
export function retentionCutoffs(
  r: { days: RetentionDays; bookkeepingDays?: RetentionDays | undefined },
  nowMs: number,
): Pick<PruneOptions, 'behavioursBefore' | 'bookkeepingBefore'> {
  const now = Math.floor(nowMs / 1000);
  const book = r.bookkeepingDays ?? r.days;
  return {
    ...(r.days === 'off' ? {} : { behavioursBefore: now - r.days * DAY_SEC }),
    ...(book === 'off' ? {} : { bookkeepingBefore: now - book * DAY_SEC }),
  };
}

/** An empty report (nothing removed yet). */
export function emptyPruneReport(): PruneReport {
  return { behaviours: 0, partitions: [], deadLetters: 0, batches: 0, watchHits: 0, artefacts: 0, sharedObjects: 0, done: true };
}
