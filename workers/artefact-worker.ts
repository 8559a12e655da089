/** Entry point of a long-running artefact download worker: `node dist/workers/artefact-worker.js`. */
import { runWorker } from './runWorker.js';

await runWorker('artefacts');
