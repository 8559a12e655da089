import type { Config } from '../config/index.js';
import { Queue, QUEUE_STREAMS, type Queues } from '../queue/index.js';
import { LOOKUP_QUEUE, type LookupJobData, type LookupJobResult } from './names.js';

/**
 * The lookup queue on the pipeline's Redis connection. Finished jobs are dropped after a day:
 * whether a hash is done is the batch log's to say (it survives Redis), the job only carries the work.
 */
export function createLookupQueue(queues: Queues, config: Config): Queue<LookupJobData, LookupJobResult> {
  const q = new Queue<LookupJobData, LookupJobResult>(LOOKUP_QUEUE, {
    connection: queues.connection,
    prefix: config.queuePrefix,
    streams: QUEUE_STREAMS,
    defaultJobOptions: {
      attempts: config.lookup.attempts,
      backoff: { type: 'exponential', delay: config.lookup.backoffMs },
      removeOnComplete: { age: 24 * 3600 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
  q.on('error', () => undefined); // the queues' connection reports outages once
  return q;
}
