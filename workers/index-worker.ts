/** Entry point of a long-running index worker: `node dist/workers/index-worker.js`. */
import { runWorker } from './runWorker.js';

await runWorker('index');
