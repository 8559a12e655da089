/**
 * Entry of the index stage when it runs in a worker thread of a `backfill` or `run` process, so
 * the two stages use two cores instead of sharing one JavaScript thread. It opens its own store
 * and Redis connections from the configuration it is given, and answers the parent's messages.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config/index.js';
import { errorCode, messageOf, storeFaultOfReason } from '../errors/index.js';
import { createLogger } from '../log/index.js';
import { flushMetrics, forwardMetrics } from '../metrics/index.js';
import { openStore } from '../store/index.js';
import { createWatchHook } from '../watch/index.js';
import { createQueues } from '../queue/index.js';
import { IndexWorker } from './IndexWorker.js';
import type { ThreadMessage, ThreadReply } from './IndexThread.js';

const { config, redisUrl, bindings, watch } = workerData as {
  config: Config;
  redisUrl: string;
  bindings: Record<string, unknown>;
  watch: boolean;
};
const port = parentPort;
if (!port) throw new Error('indexThread runs only as a worker thread');
const reply = (m: ThreadReply): void => port.postMessage(m);

// the parent serves /metrics: the stage's measurements go there
forwardMetrics((events) => port.postMessage({ type: 'metrics', events } satisfies ThreadReply));
const log = createLogger(config.logLevel, { ...bindings, thread: 'index' }, { format: config.logFormat });
const store = openStore(config.store, config);
const queues = createQueues(redisUrl, config, log);
const worker = new IndexWorker({
  redisUrl,
  config,
  store,
  queues,
  log,
  // the thread's own store: watch hits are matched and notified where the documents are written
  onStored: watch ? createWatchHook(store, log) : undefined,
  onFatal: (err) => reply({ type: 'fatal', code: errorCode(err) ?? null, message: messageOf(err) }),
});
worker.start();
reply({ type: 'started' });

port.on('message', (m: ThreadMessage) => {
  if (m.type === 'chunk') {
    const { id } = m;
    worker.storeHanded(m.batch, m.n, m.metas, m.docs).then(
      () => reply({ type: 'chunkDone', id }),
      (err: unknown) =>
        reply({
          type: 'chunkDone',
          id,
          error: { code: errorCode(err) ?? storeFaultOfReason(messageOf(err)) ?? null, message: messageOf(err) },
        }),
    );
    return;
  }
  if (m.type === 'flush') return worker.commitHeld();
  void (async () => {
    await worker.stop(m.force).catch((err: unknown) => log.warn({ err: messageOf(err) }, 'index stage stop failed'));
    await queues.close();
    await store.close();
    flushMetrics();
    reply({ type: 'stopped' });
  })();
});
