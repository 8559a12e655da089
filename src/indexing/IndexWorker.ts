import { errorCode, isRetryable, isStoreFault, messageOf } from '../errors/index.js';
import {
  UnrecoverableError,
  type Job,
  QueueWorker,
  type StageWorkerOptions,
  INDEX_QUEUE,
  type IndexJobData,
  type IndexJobResult,
} from '../queue/index.js';
import { record } from '../metrics/index.js';
import { deadLetterId, otherStoreRefusal, storeIdentity, type DeadLetterInput } from '../store/index.js';
import { decodeChunk, type SinkDoc } from '../wire/index.js';
import { IndexStage } from './IndexStage.js';

/**
 * The index stage behind BullMQ: takes index jobs from Redis, decodes each one's chunk and has
 * the stage store it; on the last attempt of a chunk the store cannot take, the chunk is marked
 * failed in the batch log instead of being dropped.
 */
export class IndexWorker extends QueueWorker<IndexJobData, IndexJobResult> {
  /** What stores the chunks: this worker's own, or the index thread's, shared with its in-memory producers. */
  readonly stage: IndexStage;
  /** The store this worker writes, as jobs name it (storeIdentity): read once. */
  private readonly storeId: string | undefined;

  constructor(o: StageWorkerOptions, stage?: IndexStage) {
    super(o, INDEX_QUEUE, 'index', o.config.index.concurrency);
    this.storeId = storeIdentity(o.store);
    this.stage = stage ?? new IndexStage({ config: o.config, store: o.store, log: o.log, onStored: o.onStored, now: o.now });
    const { feed, index } = o.queues;
    // on its way: a feed batch read or waiting, an index job this worker could still take
    this.stage.watchQueue(async () => {
      const [f, i] = await Promise.all([
        feed.getJobCounts('active', 'waiting', 'prioritized', 'delayed'),
        index.getJobCounts('waiting', 'prioritized', 'delayed'),
      ]);
      return [...Object.values(f), ...Object.values(i)].some((n) => n > 0);
    });
  }

  override start(): void {
    super.start();
    this.stage.start();
  }

  override async stop(force = false): Promise<void> {
    await Promise.all([super.stop(force), this.stage.stop(force)]);
  }

  protected async process(job: Job<IndexJobData, IndexJobResult>): Promise<IndexJobResult> {
    const { batch, n } = job.data;
    const { store, config } = this.o;
    const refused = otherStoreRefusal(job.data.store, this.storeId, 'this chunk was read', 'this index worker');
    if (refused) throw new UnrecoverableError(refused);
    const redis = this.o.queues.connection;
    const payload = await redis.getBuffer(job.data.payloadKey);
    if (!payload) {
      // deleted once stored: a second run of a finished job (a lost lock) has nothing left to do
      if ((await store.batches.storedChunks(batch, n + 1)).includes(n)) return { indexed: 0, stale: 0, rejected: 0, deadLettered: 0 };
      throw new UnrecoverableError(`QUEUE_STATE_LOST: the payload of ${job.id} is gone from Redis (restarted empty or flushed?)`);
    }
    let docs: SinkDoc[];
    try {
      docs = await decodeChunk(payload, job.data.rawBytes ?? olderJobCap(config));
    } catch (err) {
      await store.dlq.put([chunkLetter(batch, n, payload, err)]);
      throw new UnrecoverableError(messageOf(err));
    }
    let result: IndexJobResult;
    try {
      result = await this.stage.storeDocs(batch, n, docs, String(job.id));
    } catch (err) {
      return await this.storeFailed(job, err);
    }
    // the payload can go: a repeated run finds the batch log's mark instead
    await redis.del(job.data.payloadKey);
    return result;
  }

  /**
   * A chunk the store could not take: the job is tried again while its code allows (a full disk
   * or a busy store may pass; a damaged or read-only store will not), and on its last try the
   * chunk is marked failed in the batch log with the cause, so its batch reads failed and a
   * re-run stores it. Nothing is dead-lettered: the documents are not at fault.
   */
  private async storeFailed(job: Job<IndexJobData, IndexJobResult>, err: unknown): Promise<never> {
    const code = errorCode(err);
    // refused credentials: the stage runner stops the stage and keeps the job
    if (code === 'SINK_AUTH') throw err;
    const { batch, n } = job.data;
    const tries = isStoreFault(err) ? Math.min(job.opts.attempts ?? 1, this.o.config.index.storeFaultAttempts) : (job.opts.attempts ?? 1);
    const final = !isRetryable(err) || job.attemptsMade + 1 >= tries;
    const reason = `${code ?? 'ERROR'}: ${messageOf(err)}`;
    if (!final) throw err;
    // the feed stage counted the batch when it had read it; that it failed is known here (so the
    // failed-batches alert fires in a fleet too), once per chunk the store did not take
    record({ m: 'batch', outcome: 'failed' });
    // the store may refuse this write too (the disk is still full): the failed job says it then
    await this.o.store.batches
      .chunkFailed(batch, n, reason)
      .catch((e: unknown) => this.o.log.warn({ batch, err: messageOf(e) }, 'the batch log could not record the failure'));
    throw new UnrecoverableError(reason);
  }
}

/**
 * The decode cap of a job queued by a version that did not record its chunk's size: a full chunk
 * plus the largest line it can end with, twice over for what normalizing adds (ids, pivots).
 */
function olderJobCap(config: StageWorkerOptions['config']): number {
  return config.index.chunkMaxBytes + 2 * config.feed.maxLineBytes;
}

function chunkLetter(batch: string, n: number, payload: Buffer, err: unknown): DeadLetterInput {
  return {
    id: deadLetterId('index', batch, `chunk-${n}`),
    stage: 'index',
    batch,
    line: null,
    docId: null,
    code: errorCode(err) ?? 'CHUNK_CORRUPT',
    path: null,
    message: messageOf(err),
    raw: payload.toString('base64'),
    rawEncoding: 'base64',
    rawSize: payload.length,
    rawTruncated: false,
  };
}
