/** Entry point of a long-running lookup worker (hash jobs and their artefact downloads): `node dist/workers/lookup-worker.js`. */
import { runWorker } from './runWorker.js';

await runWorker('lookup');
