import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { startOpsServer } from '../ops/index.js';
import type { Store } from '../store/index.js';
import { Queue, type Queues, PIPELINE_QUEUES, QUEUE_STREAMS } from '../queue/index.js';

/** A process's operations server, or nothing when http.port is unset. */
export interface ProcessOps {
  /** `http://host:port` when serving. */
  url: string | undefined;
  /** From now on /readyz answers not ready (the process is draining). */
  draining(): void;
  close(): Promise<void>;
}

/**
 * Starts the operations server of a long-running process when http.port is set: metrics, health,
 * readiness (this process's Redis connection, its store, not draining) and the dashboard of every
 * queue of the pipeline.
 */
export async function startProcessOps(o: { config: Config; log: Logger; store: Store; queues: Queues }): Promise<ProcessOps> {
  if (o.config.http.port === undefined) return { url: undefined, draining: () => undefined, close: async () => undefined };
  const own = new Map<string, Queue>([
    [o.queues.feed.name, o.queues.feed],
    [o.queues.index.name, o.queues.index],
  ]);
  const extra: Queue[] = [];
  const all = PIPELINE_QUEUES.map((name) => {
    const q = own.get(name);
    if (q) return q;
    const created = new Queue(name, { connection: o.queues.connection, prefix: o.config.queuePrefix, streams: QUEUE_STREAMS });
    created.on('error', () => undefined); // outages are reported by the queues' connection
    extra.push(created);
    return created;
  });
  let draining = false;
  const server = await startOpsServer({
    config: o.config,
    log: o.log,
    store: o.store,
    queues: all,
    readiness: {
      redis: () => o.queues.connection.ping(),
      store: () => o.store.dlq.count(),
      draining: () => draining,
    },
  });
  return {
    url: server.url,
    draining: () => (draining = true),
    close: async () => {
      await server.close();
      await Promise.allSettled(extra.map((q) => q.close()));
    },
  };
}
