import type { BehaviourDoc } from '../normalize/index.js';
import type { FeedJobData, StageWorkerOptions } from '../queue/index.js';
import type { LookupJobData } from '../lookup/index.js';
import { ArtefactEnqueuer, createArtefactQueue } from './ArtefactEnqueuer.js';
import { ArtefactWorker } from './ArtefactWorker.js';
import { waitForArtefacts, type ArtefactCounts } from './waitForArtefacts.js';

/** The artefact capability as a process uses it: hooks that queue downloads, and the worker that runs them. */
export interface ArtefactStage {
  /** For feed workers: downloads through the feed lines' links (0 API units). */
  onFeedDoc(doc: BehaviourDoc, job: FeedJobData): Promise<void>;
  /** For lookup workers: downloads through the artefact endpoints (1 API unit each, within the run's budget). */
  onLookupDoc(doc: BehaviourDoc, job: LookupJobData): Promise<void>;
  /** The worker running the downloads (started and stopped by superviseWorkers as a producer). */
  worker(onFatal?: (err: Error) => void): ArtefactWorker;
  /** Waits until the queued downloads are over (a command that asked for artefacts ends after them), then counts those of `run`. */
  settle(run: string, signal?: AbortSignal): Promise<ArtefactCounts>;
  close(): Promise<void>;
}

/** Wires the artefact queue on a process's connection. Jobs without an artefact choice queue nothing. */
export function artefactStage(o: Omit<StageWorkerOptions, 'onFatal'> & { onFatal?: (err: Error) => void }): ArtefactStage {
  const queue = createArtefactQueue(o.queues, o.config);
  const enqueuer = new ArtefactEnqueuer(queue);
  return {
    onFeedDoc: async (doc, job) => {
      if (job.artefacts) await enqueuer.forDoc(doc, job.artefacts, 'feed_link');
    },
    onLookupDoc: async (doc, job) => {
      if (job.artefacts) await enqueuer.forDoc(doc, job.artefacts, 'endpoint', { run: job.run, maxApiUnits: job.maxApiUnits });
    },
    worker: (onFatal) => new ArtefactWorker({ ...o, onFatal }),
    settle: (run, signal) => waitForArtefacts(queue, { redis: o.queues.connection, prefix: o.config.queuePrefix, run }, signal),
    close: () => queue.close(),
  };
}
