import { Worker } from 'node:worker_threads';
import type { Config } from '../config/index.js';
import { SandtrailError, type ErrorCode } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { applyMetrics, type MetricEvent } from '../metrics/index.js';
import { MemoryChunkTransport, type HandoffMessage, type HandoffReply } from '../queue/index.js';

/** Parent → thread: stop, or the in-memory transport's chunks. */
export type ThreadMessage = { type: 'stop'; force: boolean } | HandoffMessage;
/** Thread → parent. */
export type ThreadReply =
  | { type: 'started' }
  | { type: 'stopped' }
  | { type: 'fatal'; code: string | null; message: string }
  | { type: 'metrics'; events: MetricEvent[] }
  | HandoffReply;

export interface IndexThreadOptions {
  redisUrl: string;
  config: Config;
  log: Logger;
  /** Called once when the store refuses the credentials: the process must stop. */
  onFatal?: (err: Error) => void;
  /** Match the documents stored as new state against the watchlists (the watch hook), where they are written. */
  watch?: boolean;
  /**
   * Take index jobs from Redis too (default true): those of a fleet's feed workers, or left by an
   * earlier run. False for a private Redis, which nothing else can fill: the thread then loads no
   * queue client and opens no Redis connection.
   */
  consumeQueue?: boolean;
}

/**
 * The thread's entry: dist's compiled indexThreadMain.js, or, when running from the TypeScript
 * sources (tests, tsx), a small module that registers tsx in the thread first (a worker thread
 * does not inherit the parent's loader hooks).
 */
function threadEntry(): URL {
  if (!import.meta.url.endsWith('.ts')) return new URL('./indexThreadMain.js', import.meta.url);
  const tsx = import.meta.resolve('tsx/esm/api');
  const main = new URL('./indexThreadMain.ts', import.meta.url).href;
  const code = `import { register } from ${JSON.stringify(tsx)}; register(); await import(${JSON.stringify(main)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}

/** How long a forced stop waits for the thread before terminating it. */
const FORCE_WAIT_MS = 3000;

/**
 * The index stage in a worker thread, with the same start/stop as an in-process IndexWorker. It
 * takes chunks of producers in this process through `transport` (in memory), and index jobs from
 * Redis as any index worker does unless `consumeQueue` is false.
 */
export class IndexThread {
  private thread: Worker | undefined;
  private stopping: Promise<void> | undefined;
  private exited: Promise<void> = Promise.resolve();
  /** The producers of this process hand their chunks to the thread through this. */
  readonly transport: MemoryChunkTransport;

  constructor(private readonly o: IndexThreadOptions) {
    this.transport = new MemoryChunkTransport(
      (m, transfer) => {
        if (!this.thread) throw new SandtrailError('INDEX_THREAD_FAILED', 'the index thread is not running');
        this.thread.postMessage(m satisfies ThreadMessage, transfer);
      },
      o.config.index.handoffMaxBytes,
      o.config.feed.concurrency,
    );
  }

  start(): void {
    if (this.thread) return;
    const thread = new Worker(threadEntry(), {
      workerData: {
        config: this.o.config,
        redisUrl: this.o.redisUrl,
        bindings: this.o.log.bindings(),
        watch: this.o.watch ?? false,
        consumeQueue: this.o.consumeQueue ?? true,
      },
    });
    this.thread = thread;
    this.exited = new Promise((resolve) =>
      thread.once('exit', (code) => {
        // chunks handed over and never answered were not stored: their jobs must fail, not complete
        this.transport.fail(new SandtrailError('INDEX_THREAD_FAILED', `the index thread exited (code ${code}) before storing every chunk`));
        resolve();
      }),
    );
    thread.on('message', (m: ThreadReply) => {
      if (m.type === 'chunkDone') this.transport.done(m);
      if (m.type === 'metrics') applyMetrics(m.events);
      if (m.type === 'fatal') {
        this.o.onFatal?.(new SandtrailError((m.code ?? 'SINK_UNAVAILABLE') as ErrorCode, m.message));
      }
    });
    thread.on('error', (err) => {
      this.o.log.error({ err: err.message }, 'index thread failed');
      this.transport.fail(new SandtrailError('INDEX_THREAD_FAILED', `the index thread failed: ${err.message}`));
      this.o.onFatal?.(err);
    });
  }

  /** Drains (the thread finishes its active jobs) or forces; safe to call twice. */
  stop(force = false): Promise<void> {
    const thread = this.thread;
    if (!thread) return Promise.resolve();
    if (force) {
      thread.postMessage({ type: 'stop', force: true } satisfies ThreadMessage);
      const timer = setTimeout(() => void thread.terminate(), FORCE_WAIT_MS);
      return this.exitAfterStopped().finally(() => clearTimeout(timer));
    }
    thread.postMessage({ type: 'stop', force: false } satisfies ThreadMessage);
    return (this.stopping ??= this.exitAfterStopped());
  }

  private async exitAfterStopped(): Promise<void> {
    const thread = this.thread as Worker;
    const stopped = new Promise<void>((resolve) =>
      thread.on('message', (m: ThreadReply) => {
        if (m.type === 'stopped') resolve();
      }),
    );
    await Promise.race([stopped, this.exited]);
    await thread.terminate();
    await this.exited;
  }
}
