import { LookupWorker } from '../lookup/index.js';
import type { WorkerExtras } from '../runner/index.js';
import { artefactStage } from './artefactStage.js';

/** Feed workers queue the artefact downloads their jobs ask for (feed links). */
export const feedWorkerExtras: WorkerExtras = { onFeedDoc: (o) => artefactStage(o).onFeedDoc };

/** A lookup worker process: hash jobs, and the artefact downloads they queue. */
export const lookupWorkerExtras: WorkerExtras = {
  producers: (o) => {
    const stage = artefactStage(o);
    return [new LookupWorker({ ...o, onDoc: stage.onLookupDoc }), stage.worker(o.onFatal)];
  },
};

/** An artefact worker process: downloads only. */
export const artefactWorkerExtras: WorkerExtras = { producers: (o) => [artefactStage(o).worker(o.onFatal)] };
