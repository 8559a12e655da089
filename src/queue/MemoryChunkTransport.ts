import { SandtrailError, type ErrorCode } from '../errors/index.js';
import type { SinkDoc } from '../wire/index.js';
import type { ChunkTransport } from './ChunkTransport.js';

/**
 * Producer → index stage: a chunk (its documents' metas as one JSON text, each document's UTF-8
 * bytes in an ArrayBuffer of its own, transferred, not copied), or "commit what you hold".
 */
export type HandoffMessage =
  { type: 'chunk'; id: number; batch: string; n: number; metas: string; docs: ArrayBuffer[] } | { type: 'flush' };

/** Index stage → producer: chunk `id` is stored, or could not be (the store's error, by its code). */
export interface HandoffReply {
  type: 'chunkDone';
  id: number;
  error?: { code: string | null; message: string };
}

interface Open {
  batch: string;
  bytes: number;
  resolve(): void;
  reject(err: Error): void;
}

/** Batches settled and waiting for their commit while a producer reads: committed two at a time. */
const HELD_BATCHES = 2;

/**
 * The jobs a feed worker runs at once where its chunks go in memory (backfill, run, lookup): its
 * `readers` (feed.concurrency) read, and up to HELD_BATCHES more wait meanwhile for their commit.
 */
export function memoryFeedConcurrency(readers: number): number {
  return readers + HELD_BATCHES;
}

/**
 * Hands chunks to the index stage of the same process: each document's bytes are transferred to
 * the index thread (no compression, no copy of the feed stage's UTF-8 bytes), and the chunks in
 * flight are bounded by their bytes: `emit` waits while `maxInFlightBytes` are handed over and not yet stored
 * (backpressure on the producer; one chunk always goes, however large). When the producer has to
 * wait (for room, or for its batch in `settle`) it tells the index stage to commit what it holds
 * rather than wait for more. `fail` ends it: every chunk still open and every later call rejects
 * with that error (the index thread died), so no job completes with chunks that were never stored.
 */
export class MemoryChunkTransport implements ChunkTransport {
  readonly kind = 'memory';
  private nextId = 0;
  private inFlightBytes = 0;
  /** Bytes handed over since the index stage was last asked to commit. */
  private unflushedBytes = 0;
  private readonly open = new Map<number, Open>();
  /** Per batch, the outcomes of its chunks handed over and not yet settled. */
  private readonly byBatch = new Map<string, Promise<void>[]>();
  private roomWaiters: (() => void)[] = [];
  private failure: Error | undefined;

  /** Producers reading a batch now (begun, not yet ended). */
  private reading = 0;
  /** Producers waiting in `begin` for a reader to end. */
  private readerWaiters: (() => void)[] = [];
  /** Batches waiting in `settle` for their commit. */
  private settling = 0;

  /**
   * @param send posts one message to the index stage (the thread's port), transferring `transfer`
   * @param maxInFlightBytes bytes of chunks handed over and not yet stored, at most (one chunk always goes)
   * @param readers producers that may read at once (`begin` waits beyond): feed.concurrency
   */
  constructor(
    private readonly send: (m: HandoffMessage, transfer: ArrayBuffer[]) => void,
    private readonly maxInFlightBytes: number,
    private readonly readers = 1,
  ) {}

  /**
   * Waits for a reader's place: batches are read one after another (or `readers` at once), while
   * the batches already read wait for their commit. Reading two side by side took 1.08x the CPU
   * on the benchmark feed (paired runs): they contend for the same cores.
   */
  async begin(): Promise<() => void> {
    // a reader that ends hands its place straight over: `reading` never drops between them
    if (this.reading < this.readers) this.reading++;
    else await new Promise<void>((resolve) => this.readerWaiters.push(resolve));
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const next = this.readerWaiters.shift();
      if (next) return next();
      this.reading--;
      // the producer the settled batches were waiting for is done (or gone): commit them now
      if (this.reading === 0 && this.settling > 0) this.flush();
    };
  }

  async emit(batch: string, n: number, docs: readonly SinkDoc[], signal?: AbortSignal): Promise<void> {
    const metas = JSON.stringify(docs.map((d) => d.meta));
    const buffers = docs.map((d) => ownBuffer(d.json));
    const bytes = buffers.reduce((sum, b) => sum + b.byteLength, metas.length);
    await this.waitForRoom(bytes, signal);
    const id = ++this.nextId;
    const done = new Promise<void>((resolve, reject) => this.open.set(id, { batch, bytes, resolve, reject }));
    // observed by settle; a chunk nobody settles (an abandoned job) must not be an unhandled rejection
    done.catch(() => undefined);
    const list = this.byBatch.get(batch) ?? [];
    list.push(done);
    this.byBatch.set(batch, list);
    this.inFlightBytes += bytes;
    this.unflushedBytes += bytes;
    this.send({ type: 'chunk', id, batch, n, metas, docs: buffers }, buffers);
    // half the bound handed over: committed now, while the producer fills the other half
    if (this.unflushedBytes >= this.maxInFlightBytes / 2) this.flush();
  }

  async settle(batch: string): Promise<void> {
    const list = this.byBatch.get(batch);
    if (!list) return;
    this.byBatch.delete(batch);
    this.settling++;
    try {
      // Every commit rewrites each index page its rows touch, so fewer, larger commits write less:
      // a batch waits for the producer still reading and is committed with its chunks, two
      // batches a commit; with no one reading, the commit is now.
      if (this.reading === 0 || this.settling >= HELD_BATCHES) this.flush();
      // every chunk's outcome first: one failure must not leave the others' rejections unobserved
      const outcomes = await Promise.allSettled(list);
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      this.settling--;
    }
  }

  /** The index stage's answer for one chunk. */
  done(reply: HandoffReply): void {
    const o = this.open.get(reply.id);
    if (!o) return;
    this.open.delete(reply.id);
    this.inFlightBytes -= o.bytes;
    if (reply.error) o.reject(new SandtrailError((reply.error.code ?? 'SINK_WRITE_FAILED') as ErrorCode, reply.error.message));
    else o.resolve();
    this.wakeWaiters();
  }

  /** The index stage is gone: every open chunk and every later emit fails with `err`. Idempotent. */
  fail(err: Error): void {
    this.failure ??= err;
    for (const o of this.open.values()) o.reject(this.failure);
    this.open.clear();
    this.inFlightBytes = 0;
    this.wakeWaiters();
  }

  /** Chunks handed over and not yet answered. */
  get pending(): number {
    return this.open.size;
  }

  private flush(): void {
    this.unflushedBytes = 0;
    if (this.open.size > 0 && !this.failure) this.send({ type: 'flush' }, []);
  }

  private async waitForRoom(bytes: number, signal?: AbortSignal): Promise<void> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.inFlightBytes === 0 || this.inFlightBytes + bytes <= this.maxInFlightBytes) return;
      if (signal?.aborted) throw new SandtrailError('SHUTTING_DOWN', 'stopped while waiting for the index stage');
      // the index stage may be holding chunks for a larger commit: what it holds is all it gets for now
      this.flush();
      // the abort listener goes with each wait: a long job waits thousands of times on one signal
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        this.roomWaiters.push(wake);
        signal?.addEventListener('abort', wake, { once: true });
      });
    }
  }

  private wakeWaiters(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const w of waiters) w();
  }
}

/**
 * The document's UTF-8 bytes in an ArrayBuffer it alone uses, to be transferred: the feed stage's
 * own (TextEncoder output, detached by the transfer: the producer is done with the document), or
 * a fresh one for text, or for a view that shares its memory (Node's pool, a decoded chunk).
 */
function ownBuffer(json: string | Buffer): ArrayBuffer {
  if (typeof json === 'string') return encoder.encode(json).buffer as ArrayBuffer;
  const ab = json.buffer;
  if (ab instanceof ArrayBuffer && json.byteOffset === 0 && json.byteLength === ab.byteLength && ab.byteLength > POOL_MAX) return ab;
  const copy = new Uint8Array(json.byteLength);
  copy.set(json);
  return copy.buffer;
}

const encoder = new TextEncoder();
/** Buffers up to this size may be slices of Node's shared pool (Buffer.poolSize / 2): never transferred. */
const POOL_MAX = Buffer.poolSize >>> 1;
