import type { Config } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { openStore } from '../store/index.js';
import { createQueues } from './createQueues.js';
import { FeedWorker } from './FeedWorker.js';
import { IndexWorker } from './IndexWorker.js';

export type WorkerKind = 'feed' | 'index' | 'all';

/**
 * Runs stage workers as a long-lived process against a shared Redis. The first SIGTERM/SIGINT
 * drains (active jobs finish, nothing new is taken); a second one forces: active jobs are
 * abandoned and another worker picks them up when their lock expires.
 */
export async function runWorkerProcess(kind: WorkerKind, config: Config, log: Logger): Promise<void> {
  if (!config.redisUrl) {
    throw new SandtrailError('USAGE', 'workers share a Redis: set REDIS_URL (or SANDTRAIL_REDIS_URL, --redis-url)');
  }
  const store = openStore(config.sink, config);
  const queues = createQueues(config.redisUrl, config);
  let fatal: Error | undefined;
  let stopNow: (() => void) | undefined;
  const onFatal = (err: Error): void => {
    fatal ??= err;
    stopNow?.();
  };
  const opts = { redisUrl: config.redisUrl, config, store, queues, log };
  const workers = [
    ...(kind !== 'index' ? [new FeedWorker({ ...opts, onFatal })] : []),
    ...(kind !== 'feed' ? [new IndexWorker({ ...opts, onFatal })] : []),
  ];
  workers.forEach((w) => w.start());
  log.info({ kind, sink: store.spec, prefix: config.queuePrefix }, 'worker started');

  await new Promise<void>((resolve) => {
    let signals = 0;
    const onSignal = (sig: NodeJS.Signals): void => {
      signals += 1;
      if (signals === 1) {
        log.info({ signal: sig }, 'draining: finishing active jobs (send the signal again to force)');
        const timer = setTimeout(() => onSignal(sig), config.worker.drainTimeoutMs);
        timer.unref();
        void Promise.all(workers.map((w) => w.stop(false))).then(() => resolve());
      } else if (signals === 2) {
        log.warn({ signal: sig }, 'forced stop: active jobs will be retried elsewhere');
        void Promise.all(workers.map((w) => w.stop(true))).finally(() => resolve());
      }
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    // refused credentials: stop at once with one clear message, no retry storm
    stopNow = () => void Promise.all(workers.map((w) => w.stop(true))).finally(() => resolve());
  });
  await queues.close();
  await store.close();
  log.info('worker stopped');
  if (fatal) throw fatal;
}
