/**
 * Entry of the index stage when it runs in a worker thread of a `backfill` or `run` process, so
 * the two stages use two cores instead of sharing one JavaScript thread. It opens its own store
 * (and, where index jobs may be queued, its own Redis connections) from the configuration it is
 * given, and answers the parent's messages.
 */
import { format } from 'node:util';
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from '../config/index.js';
import { errorCode, messageOf, storeFaultOfReason } from '../errors/index.js';
import { createLogger } from '../log/index.js';
import { flushMetrics, forwardMetrics } from '../metrics/index.js';
import { openStore } from '../store/index.js';
import { createWatchHook } from '../watch/index.js';
import { IndexStage } from './IndexStage.js';
import type { ThreadMessage, ThreadReply } from './IndexThread.js';

const { config, redisUrl, bindings, watch, consumeQueue } = workerData as {
  config: Config;
  redisUrl: string;
  bindings: Record<string, unknown>;
  watch: boolean;
  consumeQueue: boolean;
};
const port = parentPort;
if (!port) throw new Error('indexThread runs only as a worker thread');
const reply = (m: ThreadReply): void => port.postMessage(m);

// the parent serves /metrics: the stage's measurements go there
forwardMetrics((events) => port.postMessage({ type: 'metrics', events } satisfies ThreadReply));
const log = createLogger(config.logLevel, { ...bindings, thread: 'index' }, { format: config.logFormat });
// the thread's queue clients are its process's, on the same Redis, whose main thread logs their
// console warnings (BullMQ's eviction policy) once at warn: here they join the log at debug, never
// as raw text on stderr
// eslint-disable-next-line no-console -- replaces the method: nothing is written to the console
console.warn = (...args: unknown[]): void => log.debug({ source: 'library' }, format(...args));
const store = openStore(config.store, config);
// the thread's own store: watch hits are matched and notified where the documents are written
const stage = new IndexStage({
  config,
  store,
  log,
  onStored: watch ? createWatchHook(store, log, { webhook: { targets: config.webhooks } }) : undefined,
});
stage.start();
reply({ type: 'started' });

/**
 * Index jobs queued in Redis (by a fleet's feed workers, or left by an earlier run) are taken by
 * the same stage. Its queue client is loaded after the stage answers: the process's own chunks
 * need none. A private Redis, which no other process can fill, needs no consumer at all.
 */
const consumer = consumeQueue ? startConsumer() : undefined;
consumer?.catch((err: unknown) =>
  reply({ type: 'fatal', code: errorCode(err) ?? null, message: `the index queue's consumer could not start: ${messageOf(err)}` }),
);

async function startConsumer(): Promise<{ stop(force: boolean): Promise<void> }> {
  const [{ createQueues }, { IndexWorker }] = await Promise.all([import('../queue/index.js'), import('./IndexWorker.js')]);
  const queues = createQueues(redisUrl, config, log);
  const worker = new IndexWorker(
    {
      redisUrl,
      config,
      store,
      queues,
      log,
      onFatal: (err) => reply({ type: 'fatal', code: errorCode(err) ?? null, message: messageOf(err) }),
    },
    stage,
  );
  worker.start();
  return {
    stop: async (force) => {
      await worker.stop(force);
      await queues.close();
    },
  };
}

port.on('message', (m: ThreadMessage) => {
  if (m.type === 'chunk') {
    const { id } = m;
    stage.storeHanded(m.batch, m.n, m.metas, m.docs).then(
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
  if (m.type === 'flush') return stage.commitHeld();
  void (async () => {
    const stopping = [stage.stop(m.force), consumer?.then((c) => c.stop(m.force))];
    for (const s of stopping) await s?.catch((err: unknown) => log.warn({ err: messageOf(err) }, 'index stage stop failed'));
    await store.close();
    flushMetrics();
    reply({ type: 'stopped' });
  })();
});
