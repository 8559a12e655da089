import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../config/index.js';
import { errorCode, messageOf, SandtrailError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { record } from '../metrics/index.js';
import type { IndexJobResult } from '../queue/index.js';
import { deadLetterId, RetentionLoop, type DeadLetterInput, type Store } from '../store/index.js';
import { jsonText, type DocMeta, type SinkDoc } from '../wire/index.js';
import { UpsertGroup } from './UpsertGroup.js';

export interface IndexStageOptions {
  config: Config;
  store: Store;
  log: Logger;
  /** Told, after each write, about the documents written as new state (the watch hook); throwing fails the chunk. */
  onStored?: (docs: readonly SinkDoc[]) => Promise<void>;
  /** The clock retention is judged by (ms since the epoch; default the system's). */
  now?: () => number;
}

/**
 * The index stage itself, whatever brings its chunks (an index job from Redis: IndexWorker; a
 * producer of the same process, in memory: the index thread): writes each chunk's documents in
 * groups that share one store call, retries only what the sink calls retryable, dead-letters what
 * it rejects, marks the chunk in the batch log, and runs retention's short steps beside. It loads
 * no queue client: a process whose chunks all come in memory never needs one.
 */
export class IndexStage {
  /** The chunks held at once share one sink call (one SQLite transaction). */
  private readonly group: UpsertGroup;
  /** Chunks handed over in memory that wait in the group: their producer says when to commit (commitHeld). */
  private handedHeld = 0;
  /** Is anything on its way through the queue (set by IndexWorker)? Without a queue, nothing is. */
  private queued: () => Promise<boolean> = () => Promise.resolve(false);
  /** Retention's short steps run where the documents are written, between the stage's own writes. */
  private readonly retention: RetentionLoop;
  /** Whether documents past retention were reported once at warn. */
  private expiredSaid = false;

  constructor(private readonly o: IndexStageOptions) {
    // nothing on its way: no chunk handed over and waiting, nothing queued this stage could still take
    const quiet = async (): Promise<boolean> => this.handedHeld === 0 && !(await this.queued());
    this.group = new UpsertGroup(o.store.sink, o.config.index.commitWaitMs, o.config.index.concurrency, quiet);
    this.retention = new RetentionLoop(o.store.retention, o.config.retention, o.log.child({ stage: 'retention' }), o.now);
  }

  /** Says how to learn whether chunks are still queued for this stage (the index queue's consumer). */
  watchQueue(queued: () => Promise<boolean>): void {
    this.queued = queued;
  }

  /** Starts retention's steps; calling it again is a no-op. */
  start(): void {
    this.retention.start();
  }

  /** Stops retention's steps (unless `force`, after the one step a process that took none owes); safe to call twice. */
  stop(force = false): Promise<void> {
    return this.retention.stop(force);
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
  async storeDocs(batch: string, n: number, docs: SinkDoc[], job: string): Promise<IndexJobResult> {
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
    if (expired) {
      // said once per process where a command shows it (warn): a backfill of old minutes otherwise
      // counts them indexed while the store keeps none; later chunks say it at info
      const first = !this.expiredSaid;
      this.expiredSaid = true;
      log[first ? 'warn' : 'info'](
        { expired, retentionDays: config.retention.days },
        first
          ? `documents last modified more than retention.days (${String(config.retention.days)}) days ago were not stored, though the summary counts them as indexed; raise retention.days or set it off to keep them`
          : 'documents already past retention were not stored',
      );
    }
    if (pending.length > 0) {
      // still refused for the store's reasons (overloaded, unavailable): the store's failure, not
      // the documents'; the chunk is tried again and, once its tries are spent, its batch fails
      throw new SandtrailError('SINK_BUSY', `${pending.length} of ${docs.length} documents still retryable: ${lastReason}`);
    }
    // every document of the chunk is stored or dead-lettered: the batch log may count it
    await store.batches.chunkStored(batch, n, result.indexed + result.stale);
    return result;
  }
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
