/** Entry point of a long-running feed worker: `node dist/workers/feed-worker.js`. */
import { runWorker } from './runWorker.js';

await runWorker('feed');
