import { errorCode, isRetryable, messageOf } from '../errors/index.js';
import { normalizeValueAndSerialize, rejectedTextLetter } from '../feed/index.js';
import { callWithRetry, PagingGuard, readCollection, type PageInfo } from '../gti/index.js';
import { record } from '../metrics/index.js';
import type { BehaviourDoc } from '../normalize/index.js';
import {
  UnrecoverableError,
  type Job,
  RedisChunkTransport,
  type ChunkTransport,
  QueueWorker,
  type StageWorkerOptions,
} from '../queue/index.js';
import { otherStoreRefusal, storeIdentity, type DeadLetterInput } from '../store/index.js';
import { metaOf, type SinkDoc } from '../wire/index.js';
import { meteredClient } from './meteredClient.js';
import { LOOKUP_QUEUE, lookupBatch, type LookupJobData, type LookupJobResult } from './names.js';
import { RunBudget } from './RunBudget.js';

/** Called with every behaviour a lookup queued for indexing (artefact downloads hook in here). */
export type OnLookupDoc = (doc: BehaviourDoc, job: LookupJobData) => Promise<void>;

/**
 * The lookup stage behind BullMQ: one job per file hash. It pages through
 * `GET /files/{hash}/behaviours` (limit up to 40, following `meta.cursor`), parses each page as
 * a stream, and hands every report to the index stage exactly as a feed line: same normalizer,
 * same chunks, same dead letters (batch `lookup-<hash>`, line = position among the file's
 * reports). The outcome goes to the batch log, so a re-run skips what is done and a fleet
 * shares the hashes.
 */
export class LookupWorker extends QueueWorker<LookupJobData, LookupJobResult> {
  private readonly emitter: ChunkTransport;
  /** The store this worker writes, as jobs name it (storeIdentity): read once. */
  private readonly storeId: string | undefined;

  constructor(protected override readonly o: StageWorkerOptions & { onDoc?: OnLookupDoc }) {
    super(o, LOOKUP_QUEUE, 'lookup', o.config.lookup.concurrency);
    this.storeId = storeIdentity(o.store);
    this.emitter = o.transport ?? new RedisChunkTransport(o.queues, o.config, o.log.child({ stage: 'lookup' }), this.storeId);
  }

  protected async process(
    job: Job<LookupJobData, LookupJobResult>,
    _token: string | undefined,
    signal?: AbortSignal,
  ): Promise<LookupJobResult> {
    const { hash } = job.data;
    // before anything is asked of the API or written: the run reads its outcome from its own store
    const refused = otherStoreRefusal(job.data.store, this.storeId, 'this hash was enqueued', 'this lookup worker');
    if (refused) throw new UnrecoverableError(refused);
    const { config, store } = this.o;
    const batch = lookupBatch(hash);
    const log = this.o.log.child({ stage: 'lookup', batch, job: job.id });
    const startedAt = Date.now();
    const redis = this.o.queues.connection;
    // every request of the run is counted under its id; --max-api-units stops it at the total
    const budget = new RunBudget(
      redis,
      RunBudget.keyOf(config.queuePrefix, job.data.run),
      job.data.maxApiUnits ?? Number.POSITIVE_INFINITY,
    );
    const { client, spent } = meteredClient({ config, redis, budget, signal });
    const r: LookupJobResult = { outcome: 'ok', reports: 0, accepted: 0, rejected: 0, chunks: 0, pages: 0, apiUnits: 0 };
    let docs: SinkDoc[] = [];
    let docBytes = 0;
    let bytesRead = 0;
    const flush = async (): Promise<void> => {
      if (docs.length === 0) return;
      const out = docs;
      docs = [];
      docBytes = 0;
      await this.emitter.emit(batch, r.chunks, out, signal);
      r.chunks += 1;
    };
    const recordOutcome = (
      status: 'ok' | 'empty' | 'missing' | 'failed',
      error: string | null,
      kept: { accepted: number; chunks: number } = r,
    ): Promise<void> =>
      store.batches.record({
        batch,
        source: 'lookup',
        status,
        lines: r.reports,
        accepted: kept.accepted,
        rejected: r.rejected,
        chunks: kept.chunks,
        bytesDecoded: bytesRead,
        error,
        startedAt,
        finishedAt: Date.now(),
      });
    try {
      const paging = new PagingGuard('GET /files/{hash}/behaviours');
      let cursor: string | null = null;
      do {
        const base = r.reports;
        const path = `/files/${encodeURIComponent(hash)}/behaviours?limit=${config.lookup.pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        // a page cut mid-body is fetched again whole; reports it already queued are queued again
        // under the same ids (idempotent upserts), dead letters under the same keys
        const page: PageInfo & { dead: DeadLetterInput[]; accepted: number } = await callWithRetry(
          async () => {
            const dead: DeadLetterInput[] = [];
            let accepted = 0;
            const body = await client.openJson(path, signal);
            const counted = countBytes(body, (n) => (bytesRead += n));
            const items = readCollection(counted, `GET /files/{hash}/behaviours page ${r.pages + 1}`);
            let line = base;
            for (;;) {
              const next = await items.next();
              if (next.done) return { ...next.value, dead, accepted };
              line += 1;
              const n = normalizeValueAndSerialize(next.value, config.feed.maxDepth);
              if ('code' in n) {
                dead.push(rejectedTextLetter(batch, line, reportText(next.value), n, config.feed.dlqPrefixBytes));
                continue;
              }
              accepted += 1;
              docs.push({ meta: metaOf(n.doc, n.depth), json: n.json });
              docBytes += n.json.length;
              await this.o.onDoc?.(n.doc, job.data);
              if (docs.length >= config.index.chunkMaxDocs || docBytes >= config.index.chunkMaxBytes) await flush();
            }
          },
          {
            retries: config.gti.maxRetries,
            backoffMs: config.gti.backoffMs,
            signal,
            onRetry: (i) => log.warn({ attempt: i.attempt, waitMs: Math.round(i.waitMs), code: i.code }, `page retried: ${i.message}`),
          },
        );
        r.pages += 1;
        r.reports = base + page.items;
        r.accepted += page.accepted;
        r.rejected += page.dead.length;
        record({ m: 'received', stage: 'lookup', n: page.items });
        for (const d of page.dead) record({ m: 'rejected', stage: 'lookup', code: d.code, n: 1 });
        if (page.dead.length) await store.dlq.put(page.dead);
        cursor = paging.next(page.cursor, page.items);
      } while (cursor !== null);
      await flush();
      r.apiUnits = spent();
      r.outcome = r.reports === 0 ? 'no_behaviours' : 'ok';
      await recordOutcome(r.reports === 0 ? 'empty' : 'ok', null);
      // in memory: the lookup completes only once its chunks are stored
      await this.emitter.settle(batch);
      log.info({ reports: r.reports, accepted: r.accepted, rejected: r.rejected, pages: r.pages }, 'lookup done');
      return r;
    } catch (err) {
      r.apiUnits = spent();
      const code = errorCode(err);
      if (code === 'GTI_NOT_FOUND') {
        r.outcome = 'not_found';
        await recordOutcome('missing', null);
        return r;
      }
      // refused credentials stop the stage (the runner keeps the job); nothing is recorded
      if (code === 'GTI_AUTH' || code === 'SINK_AUTH') throw err;
      const final = code === 'GTI_FORBIDDEN' || !isRetryable(err) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (!final) throw err;
      // what was read before the failure was paid for (a budget stop mid-file): stored before the
      // outcome is recorded, which counts no chunks, so their marks never settle it as ok
      let accepted = r.accepted;
      try {
        await flush();
        await this.emitter.settle(batch);
      } catch {
        accepted = 0;
      }
      await recordOutcome('failed', `${code ?? 'ERROR'}: ${messageOf(err)}`, { accepted, chunks: 0 });
      log.warn({ code, err: messageOf(err) }, 'lookup failed');
      throw new UnrecoverableError(`${code ?? 'ERROR'}: ${messageOf(err)}`);
    }
  }
}

/** Passes a body through, counting its bytes. */
async function* countBytes(body: AsyncIterable<Buffer>, add: (n: number) => void): AsyncGenerator<Buffer> {
  for await (const chunk of body) {
    add(chunk.length);
    yield chunk;
  }
}

/** A refused report as its dead letter keeps it: its JSON (a value too deep or hostile to serialize says so). */
function reportText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (err) {
    return `(report could not be serialized: ${(err as Error).message})`;
  }
}
