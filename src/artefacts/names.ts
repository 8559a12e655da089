import { createHash } from 'node:crypto';
import type { ArtefactKind } from './kinds.js';

/** The queue of artefact downloads: one job per (report version, kind), apart from indexing. */
export { ARTEFACT_QUEUE } from '../queue/index.js';

/** One download. Never credentials: a feed link carries the batch's own token, not the API key. */
export interface ArtefactJobData {
  behaviourId: string;
  sha256: string;
  sandbox: string;
  kind: ArtefactKind;
  source: 'feed_link' | 'endpoint';
  /** The feed line's link (source feed_link). */
  link?: string;
  /** Size cap of this download (--artefact-max-bytes; else artefacts.maxBytes). */
  maxBytes?: number;
  /** The report version (last_modification_date) the artefact belongs to. */
  lastModified?: number;
  /** The command run that asked: its budget (--max-api-units) for endpoint calls, its counts of downloads. */
  run?: string;
  maxApiUnits?: number;
}

/** Where a run's finished downloads are counted (a hash: completed, failed), kept a week. */
export const artefactRunKey = (prefix: string, run: string): string => `${prefix}:artefact-run:${run}`;

export interface ArtefactJobResult {
  path: string;
  size: number;
  sha256: string;
  /** Already on disk and recorded: nothing was downloaded. */
  skipped: boolean;
}

/** Deterministic: the same report version's artefact is one job however often it is read. */
export function artefactJobId(behaviourId: string, lastModified: number, kind: string, source: string): string {
  const h = createHash('sha1').update(`${behaviourId}|${lastModified}|${kind}|${source}`).digest('hex');
  return `art-${h}`;
}
