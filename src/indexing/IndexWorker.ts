import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { UnrecoverableError, type Job } from 'bullmq';
import { errorCode, isRetryable, isStoreFault, messageOf, SandtrailError } from '../errors/index.js';
import { QueueWorker, type StageWorkerOptions, INDEX_QUEUE, type IndexJobData, type IndexJobResult } from '../queue/index.js';
import { decodeChunk, type DocMeta } from '../wire/index.js';
import { record } from '../metrics/index.js';
import { UpsertGroup } from './UpsertGroup.js';
import { deadLetterId, RetentionLoop, type DeadLetterInput } from '../store/index.js';
import { jsonText, type SinkDoc } from '../wire/index.js';

/**
 * The index stage behind BullMQ: writes one chunk to the sink, retries only the items the sink
 * calls retryable, dead-letters rejected items, and on the last attempt dead-letters whatever
 * is still failing instead of dropping it.
 */
export class IndexWorker extends QueueWorker<IndexJobData, IndexJobResult> {
  /** The chunks this worker holds at once share one sink call (one SQLite transaction). */
  private readonly group: UpsertGroup;
  /** Chunks handed over in memory that wait in the group: their producer says when to commit (commitHeld). */
  private handedHeld = 0;
  /** Retention's short steps run where the documents are written, between the stage's own writes. */
  private readonly retention: RetentionLoop;

  constructor(o: StageWorkerOptions) {
    super(o, INDEX_QUEUE, 'index', o.config.index.concurrency);
    const { feed, index } = o.queues;
    // nothing on its way: no feed batch read or waiting, no index job this worker could still take
    const quiet = async (): Promise<boolean> => {
      if (this.handedHeld > 0) return false;
      const [f, i] = await Promise.all([
        feed.getJobCounts('active', 'waiting', 'prioritized', 'delayed'),
        index.getJobCounts('waiting', 'prioritized', 'delayed'),
      ]);
      return [...Object.values(f), ...Object.values(i)].every((n) => n === 0);
    };
    this.group = new UpsertGroup(o.store.sink, o.config.index.commitWaitMs, o.config.index.concurrency, quiet);
    this.retention = new RetentionLoop(o.store.retention, o.config.retention, o.log.child({ stage: 'retention' }), o.now);
  }

  override start(): void {
    super.start();
    this.retention.start();
  }

  override async stop(force = false): Promise<void> {
    await Promise.all([super.stop(force), this.retention.stop()]);
  }

  protected async process(job: Job<IndexJobData, IndexJobResult>): Promise<IndexJobResult> {
    const { batch, n } = job.data;
    const { store, config } = this.o;
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
      result = await this.storeDocs(batch, n, docs, String(job.id));
    } catch (err) {
      return await this.storeFailed(job, err);
    }
    // the payload can go: a repeated run finds the batch log's mark instead
    await redis.del(job.data.payloadKey);
    return result;
  }

  /**
   * Stores chunk `n` of `batch` handed over in memory (MemoryChunkTransport: its metas' JSON and
   * each document's bytes), as an index job's chunk is stored. Throws the store's failure (the
   * producer's job fails and is tried again), with the chunk marked failed in the batch log.
   */
  async storeHanded(batch: string, n: number, metas: string, bytes: readonly ArrayBuffer[]): Promise<IndexJobResult> {
    const parsed = JSON.parse(metas) as DocMeta[];
    const docs = parsed.map((meta, i): SinkDoc => ({ meta, json: Buffer.from(bytes[i] as ArrayBuffer) }));
    this.handedHeld++;
    try {
      return await this.storeDocs(batch, n, docs, `memory-${batch}-${n}`);
    } catch (err) {
      // marked at once, where the store just refused it (a full disk may take no further write
      // later): the batch reads failed with the cause until a try of its job stores the chunk
      const reason = `${errorCode(err) ?? 'ERROR'}: ${messageOf(err)}`;
      await this.o.store.batches
        .chunkFailed(batch, n, reason)
        .catch((e: unknown) => this.o.log.warn({ batch, err: messageOf(e) }, 'the batch log could not record the failure'));
      throw err;
    } finally {
      this.handedHeld--;
    }
  }

  /** Writes the chunks the group holds now: a producer in this process is waiting for them. */
  commitHeld(): void {
    this.group.flushNow();
  }

  /**
   * Writes one chunk's documents, retrying only the items the sink calls retryable, dead-lettering
   * the rejected ones, then marks the chunk stored in the batch log. Throws when the store itself
   * fails (or still refuses items after the in-job retries): nothing of the chunk is the
   * documents' fault then.
   */
  private async storeDocs(batch: string, n: number, docs: SinkDoc[], job: string): Promise<IndexJobResult> {
    const { store, config } = this.o;
    const log = this.o.log.child({ stage: 'index', batch, job });
    const result: IndexJobResult = { indexed: 0, stale: 0, rejected: 0, deadLettered: 0 };
    const dead: DeadLetterInput[] = [];
    let pending = docs;
    const stored: SinkDoc[] = [];
    let expired = 0;
    let lastReason = '';
    for (let attempt = 0; pending.length > 0; attempt++) {
      const results = await this.group.upsert(pending);
      const retry: SinkDoc[] = [];
      results.forEach((r, i) => {
        const doc = pending[i] as SinkDoc;
        if (r.status === 'ok') {
          if (r.expired) expired++;
          if (r.stale) result.stale++;
          else {
            result.indexed++;
            stored.push(doc);
          }
        } else if (r.status === 'rejected') {
          dead.push(docLetter(batch, doc, r.code, r.reason));
        } else {
          retry.push(doc);
          lastReason = `${r.code}: ${r.reason}`;
        }
      });
      pending = retry;
      if (pending.length === 0 || attempt >= config.index.sinkRetries) break;
      // exponential backoff with full jitter, so several workers do not retry in lockstep
      await sleep(Math.random() * config.index.backoffMs * 2 ** attempt);
    }
    // watches see only new state; a replay finds its hits recorded and notifies nothing
    await this.o.onStored?.(stored);
    result.rejected = dead.length;
    if (result.indexed) record({ m: 'indexed', stage: 'index', n: result.indexed });
    if (result.stale) record({ m: 'stale', n: result.stale });
    for (const d of dead) record({ m: 'rejected', stage: 'index', code: d.code, n: 1 });
    await store.dlq.put(dead);
    result.deadLettered = dead.length;
    if (dead.length) log.warn({ deadLettered: dead.length }, 'items dead-lettered');
    // converged like stale replays (the batch counts them), but a user wonders where they went
    if (expired) log.info({ expired, retentionDays: config.retention.days }, 'documents already past retention were not stored');
    if (pending.length > 0) {
      // still refused for the store's reasons (overloaded, unavailable): the store's failure, not
      // the documents'; the chunk is tried again and, once its tries are spent, its batch fails
      throw new SandtrailError('SINK_BUSY', `${pending.length} of ${docs.length} documents still retryable: ${lastReason}`);
    }
    // every document of the chunk is stored or dead-lettered: the batch log may count it
    await store.batches.chunkStored(batch, n, result.indexed + result.stale);
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

/** An index-stage dead letter keeps the document's JSON text whole: a replay only writes it again. */
function docLetter(batch: string, doc: SinkDoc, code: string, reason: string): DeadLetterInput {
  const raw = jsonText(doc);
  return {
    id: deadLetterId('index', batch, doc.meta.id),
    stage: 'index',
    batch,
    line: null,
    docId: doc.meta.id,
    code,
    path: null,
    message: reason,
    raw,
    rawEncoding: 'utf8',
    rawSize: Buffer.byteLength(raw),
    rawSha256: createHash('sha256').update(raw).digest('hex'),
    rawTruncated: false,
  };
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
