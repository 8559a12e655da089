import type { Queue } from 'bullmq';
import type { SharedStateReader } from '../metrics/index.js';
import { minuteToMs } from '../minute/index.js';
import type { Store } from '../store/index.js';
import { withTimeout } from './withTimeout.js';

const STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed'] as const;
/** Batch-log entries read to find the newest processed minute and the run of missing ones. */
const RECENT = 1440;
/** A scrape never waits longer than this for Redis or the store: a gauge it could not read is left out. */
const READ_TIMEOUT_MS = 2000;

/** Gauges of the shared state, read from the pipeline's queues (Redis) and the store. */
export function sharedStateReader(queues: readonly Queue[], store: Store): SharedStateReader {
  const reader: SharedStateReader = {
    async queueDepths() {
      const out: Record<string, Record<string, number>> = {};
      for (const q of queues) out[q.name] = (await q.getJobCounts(...STATES)) as Record<string, number>;
      return out;
    },
    deadLetters: () => store.dlq.count(),
    async ingestion() {
      const done = (await store.batches.minutes(RECENT)).filter((e) => e.status !== 'pending' && e.status !== 'failed');
      const newest = done[0];
      if (!newest) return { lagSeconds: null, missingInARow: 0 };
      let missingInARow = 0;
      for (const e of done) {
        if (e.status !== 'missing') break;
        missingInARow += 1;
      }
      return { lagSeconds: Math.max(0, Math.round((Date.now() - minuteToMs(newest.batch) - 60_000) / 1000)), missingInARow };
    },
  };
  // while Redis is down its commands wait in the client's queue: a scrape would never end, and
  // Prometheus would lose the process's counters for the whole outage
  return {
    queueDepths: () => withTimeout(reader.queueDepths(), READ_TIMEOUT_MS),
    deadLetters: () => withTimeout(reader.deadLetters(), READ_TIMEOUT_MS),
    ingestion: () => withTimeout(reader.ingestion(), READ_TIMEOUT_MS),
  };
}
