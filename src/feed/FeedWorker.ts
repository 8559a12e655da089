import { errorCode, isRetryable, isStoreFault, messageOf, SandtrailError } from '../errors/index.js';
import { ledgerClient, QuotaLedger } from '../quota/index.js';
import { createSource } from './createSource.js';
import { clearStaleDeadLetters } from './clearStaleDeadLetters.js';
import { processBatch } from './processBatch.js';
import { processHour } from './processHour.js';
import type { FeedSource } from './FeedSource.js';
import type { Logger } from '../log/index.js';
import type { BehaviourDoc } from '../normalize/index.js';
import { failedEntry, otherStoreRefusal, storeIdentity, type DeadLetterInput } from '../store/index.js';
import { type SinkDoc } from '../wire/index.js';
import { record } from '../metrics/index.js';
import {
  DelayedError,
  UnrecoverableError,
  type Job,
  RedisChunkTransport,
  type ChunkTransport,
  QueueWorker,
  type StageWorkerOptions,
  FEED_QUEUE,
  memoryFeedConcurrency,
  type FeedJobData,
  type FeedJobResult,
} from '../queue/index.js';
import { addMinutes, minuteToMs } from '../minute/index.js';

/** Runs of missing minutes already said, remembered by their last minute. */
const ALERTED_RUNS_KEPT = 64;

/**
 * The feed stage behind BullMQ: one job per batch. Its chunks go to the index stage through the
 * transport: as index jobs with deterministic ids (the worker waits while the index queue is
 * above its high-water mark), or in memory to the index thread of this process, and then the job
 * completes only once every chunk of its batch is stored.
 */
export class FeedWorker extends QueueWorker<FeedJobData, FeedJobResult> {
  private readonly sources = new Map<string, FeedSource>();
  private readonly transport: ChunkTransport;
  /** The last minute of each run of missing minutes this worker has raised its alert for. */
  private readonly alertedRuns = new Set<string>();
  /** The store this worker writes, as jobs name it (storeIdentity): read once. */
  private readonly storeId: string | undefined;

  constructor(o: StageWorkerOptions) {
    // a job handing chunks over in memory waits for its commit at its end: others run meanwhile,
    // one reading while up to two wait to share a commit (memoryFeedConcurrency)
    super(
      o,
      FEED_QUEUE,
      'feed',
      o.transport?.kind === 'memory' ? memoryFeedConcurrency(o.config.feed.concurrency) : o.config.feed.concurrency,
    );
    this.storeId = storeIdentity(o.store);
    this.transport = o.transport ?? new RedisChunkTransport(o.queues, o.config, o.log.child({ stage: 'feed' }), this.storeId);
  }

  private sourceFor(spec: string): FeedSource {
    let s = this.sources.get(spec);
    if (!s) {
      const { feed, gti, queuePrefix } = this.o.config;
      let api;
      // a fleet worker started without the key: it stops and keeps the minute for a worker that has one
      if (spec === 'api' && !gti.apiKey) {
        throw new SandtrailError(
          'GTI_AUTH',
          'this feed worker has no GTI API key, which minutes of the api source need: set GTI_APIKEY in its environment',
        );
      }
      if (spec === 'api') {
        // every request is on record: feed reads at 0 API units (rule 3)
        const client = ledgerClient(gti, { ledger: new QuotaLedger(this.o.queues.connection, queuePrefix) });
        api = { client, pathSpelling: feed.pathSpelling };
      }
      s = createSource(spec, { decoder: feed.decoder, decoderThreads: feed.decoderThreads, api });
      this.sources.set(spec, s);
    }
    return s;
  }

  protected async process(job: Job<FeedJobData, FeedJobResult>, token?: string, signal?: AbortSignal): Promise<FeedJobResult> {
    const { batch, source: spec } = job.data ?? {};
    if (typeof batch !== 'string' || typeof spec !== 'string') {
      // the job's hash was evicted from Redis under it: nothing says which minute to read, and no
      // retry can; the backfill waiting for it enqueues its minute again (QUEUE_STATE_LOST)
      throw new UnrecoverableError(
        `QUEUE_STATE_LOST: feed job ${String(job.id)} has no data left in Redis (evicted: run Redis with maxmemory-policy noeviction)`,
      );
    }
    const refused = otherStoreRefusal(job.data.store, this.storeId, 'this minute was enqueued', 'this feed worker');
    if (refused) throw new UnrecoverableError(refused);
    const { config, store } = this.o;
    const log = this.o.log.child({ stage: 'feed', batch, job: job.id });
    const startedAt = Date.now();
    // reading: a batch settling meanwhile may wait for this one's chunks, to share its commit
    const endReading = await this.transport.begin();
    // the dead letters this run writes: a minute read again whole clears those of its lines now stored
    const rejectedIds = new Set<string>();
    try {
      const common = {
        maxLineBytes: config.feed.maxLineBytes,
        prefixBytes: config.feed.dlqPrefixBytes,
        maxDepth: config.feed.maxDepth,
        maxBatchBytes: config.feed.maxBatchBytes,
        dlqMaxBatchBytes: config.feed.dlqMaxBatchBytes,
        chunkMaxDocs: config.index.chunkMaxDocs,
        chunkMaxBytes: config.index.chunkMaxBytes,
        signal,
        log,
        deadLetter: (entries: DeadLetterInput[]) => {
          for (const e of entries) {
            record({ m: 'rejected', stage: 'feed', code: e.code, n: 1 });
            rejectedIds.add(e.id);
          }
          return store.dlq.put(entries);
        },
        onDoc: job.data.artefacts?.kinds.length && this.o.onFeedDoc ? this.feedDocHook(job.data) : undefined,
      };
      if (job.data.hour) {
        const hour = await processHour({
          ...common,
          source: this.sourceFor(spec),
          hour: job.data.hour,
          decoder: config.feed.decoder,
          emitChunk: (minute, n, docs) => this.emit(minute, n, docs, signal),
          record: (outcome) => {
            countBatch(outcome);
            return store.batches.record({ ...outcome, error: null });
          },
        });
        if (!hour) {
          // packages lag about two hours behind the minutes: a missing one is asked again later
          if ((job.data.notFoundSeen ?? 0) < config.feed.missingRetries) {
            await job.updateData({ ...job.data, notFoundSeen: (job.data.notFoundSeen ?? 0) + 1 });
            return await this.defer(job, token, config.feed.missingRetryDelayMs, log, 'hourly package not found');
          }
          throw new UnrecoverableError(`hourly package ${job.data.hour} not found`);
        }
        // in memory: the job completes only once the hour's chunks are stored (a failure fails it here)
        endReading();
        await Promise.all(Object.keys(hour.perMinute).map((m) => this.transport.settle(m)));
        log.info({ hour: job.data.hour, accepted: hour.accepted, rejected: hour.rejected, chunks: hour.chunks }, 'hourly package done');
        return {
          status: hour.accepted + hour.rejected > 0 ? 'ok' : 'empty',
          chunks: hour.chunks,
          accepted: hour.accepted,
          rejected: hour.rejected,
          perMinute: hour.perMinute,
          ...this.storedMark(),
        };
      }
      const outcome = await processBatch({
        ...common,
        source: this.sourceFor(spec),
        batch,
        skipLines: job.data.skipLines,
        emitChunk: (n, docs) => this.emit(batch, n, docs, signal),
      });
      // A 404 minute may still appear: ask again a few times over a grace period first; not one
      // older than the feed keeps, which is gone for good
      if (outcome.status === 'missing' && spec === 'api' && this.ageMs(batch) < FEED_KEPT_MS) {
        const seen = (job.data.notFoundSeen ?? 0) + 1;
        if (seen <= config.feed.missingRetries) {
          await job.updateData({ ...job.data, notFoundSeen: seen });
          return await this.defer(job, token, config.feed.missingRetryDelayMs, log, `not found (${seen}/${config.feed.missingRetries})`);
        }
      }
      await store.batches.record({ ...outcome, error: null });
      // in memory: the job completes only once its chunks are stored (a failure fails it here; the
      // index stage has marked the chunk failed, so the batch reads failed until a try stores it)
      endReading();
      await this.transport.settle(batch);
      // counted once the minute is done: a try that fails after reading it would count it again
      countBatch(outcome);
      if (outcome.status === 'missing') await this.checkMissingRun(batch, log);
      if ((outcome.status === 'ok' || outcome.status === 'empty') && !job.data.skipLines) {
        const removed = await clearStaleDeadLetters(store.dlq, batch, rejectedIds);
        if (removed) log.info({ removed }, 'dead letters of lines this run stored are removed');
      }
      log.info(
        { status: outcome.status, lines: outcome.lines, accepted: outcome.accepted, rejected: outcome.rejected, chunks: outcome.chunks },
        'batch done',
      );
      return {
        status: outcome.status,
        chunks: outcome.chunks,
        accepted: outcome.accepted,
        rejected: outcome.rejected,
        ...this.storedMark(),
      };
    } catch (caught) {
      if (caught instanceof DelayedError || (caught as Error).name === 'DelayedError') throw caught;
      let err = caught;
      let code = errorCode(err);
      // Upstream answers that say "later" keep the minute and spend no attempt, unless "later" cannot come
      if (code === 'GTI_NOT_AVAILABLE_YET') {
        const ageMs = this.ageMs(job.data.hour ? `${job.data.hour}59` : batch);
        if (ageMs < FEED_KEPT_MS) {
          if (ageMs > LATE_MS)
            log.warn({ ageHours: Math.round(ageMs / 3_600_000) }, 'not available yet, long after the usual hour: asked again later');
          return await this.defer(job, token, config.feed.notAvailableDelayMs, log, 'not available yet');
        }
        // the feed keeps 7 days: a minute older than that is never published now
        err = new SandtrailError(
          'SOURCE_NOT_FOUND',
          `${messageOf(err)}: the minute is older than the feed's 7 days and will not be published`,
        );
        code = 'SOURCE_NOT_FOUND';
      } else if (code === 'GTI_RATE_LIMITED') {
        const retryAfterS = (err as { details?: { retryAfterS?: number } }).details?.retryAfterS;
        const waitMs = Math.min(retryAfterS ? retryAfterS * 1000 : config.feed.rateLimitDelayMs, MAX_RATE_LIMIT_WAIT_MS);
        // said at warn: a run waiting on the API's limit looks stuck otherwise
        log.warn({ retryAfterS, waitMs }, 'rate limited by the API: the minute is asked again after the wait');
        return await this.defer(job, token, waitMs, log, 'rate limited');
      }
      // refused credentials: the stage runner stops the stage and keeps the job
      if (code === 'GTI_AUTH' || code === 'SINK_AUTH') throw err;
      // a download that does not decode may be a bad transfer (a proxy's page, a body cut where a
      // block ends): fetched again a few times, where a file on disk would stay as it is
      const badDownload = code === 'BATCH_CORRUPT' && spec === 'api';
      const retryable = isRetryable(err) || badDownload;
      // a store fault that may pass gets the few tries index.storeFaultAttempts allows
      const attempts = job.opts.attempts ?? 1;
      const tries = isStoreFault(err)
        ? Math.min(attempts, config.index.storeFaultAttempts)
        : badDownload
          ? Math.min(attempts, BAD_DOWNLOAD_TRIES)
          : attempts;
      const final = !retryable || job.attemptsMade + 1 >= tries;
      const reason = `${code ?? 'ERROR'}: ${messageOf(err)}`;
      if (final) {
        // Recorded before the job settles so anyone waiting on the job sees the log entry.
        record({ m: 'batch', outcome: 'failed' });
        // a store at fault may refuse this write too: the failed job keeps the reason then
        // (the stable code first in the reason, so an operator and `status` tell the failure classes apart)
        await store.batches
          .record(failedEntry(batch, spec, reason, startedAt))
          .catch((e: unknown) => log.warn({ err: messageOf(e) }, 'the batch log could not record the failure'));
      }
      // a store fault keeps its code in the job's reason, so the run waiting on it stops with the cause
      if (final && (isStoreFault(err) || badDownload)) throw new UnrecoverableError(reason);
      if (!retryable) throw new UnrecoverableError(messageOf(err));
      throw err;
    } finally {
      endReading();
    }
  }

  private feedDocHook(data: FeedJobData): (doc: BehaviourDoc) => Promise<void> {
    const hook = this.o.onFeedDoc as NonNullable<StageWorkerOptions['onFeedDoc']>;
    return (doc) => hook(doc, data);
  }

  /** Hands one chunk to the index stage, waiting while it is behind. */
  private emit(batch: string, n: number, docs: readonly SinkDoc[], signal?: AbortSignal): Promise<void> {
    return this.transport.emit(batch, n, docs, signal);
  }

  /** How long ago `minute` was, by the worker's clock. */
  private ageMs(minute: string): number {
    return (this.o.now ?? Date.now)() - minuteToMs(minute);
  }

  /** A job whose chunks went in memory says they are stored: its waiter has no index job to follow. */
  private storedMark(): { stored?: true } {
    return this.transport.kind === 'memory' ? { stored: true } : {};
  }

  /** Puts the job back for later without spending an attempt. */
  private async defer(
    job: Job<FeedJobData, FeedJobResult>,
    token: string | undefined,
    delayMs: number,
    log: Logger,
    why: string,
  ): Promise<never> {
    log.info({ delayMs }, `deferred: ${why}`);
    await job.moveToDelayed(Date.now() + delayMs, token);
    throw new DelayedError();
  }

  /**
   * Several missing minutes in a row is an incident: say so loudly (status shows it too), once per
   * run of them. A minute that extends a run already said (its previous minute ended it) is not
   * said again: a day-long gap was one error line per minute.
   */
  private async checkMissingRun(batch: string, log: Logger): Promise<void> {
    const n = this.o.config.feed.missingAlertMinutes;
    const minutes = Array.from({ length: n }, (_, i) => addMinutes(batch, -i));
    const entries = await this.o.store.batches.get(minutes);
    if (entries.length !== n || !entries.every((e) => e.status === 'missing')) return;
    const extended = this.alertedRuns.delete(addMinutes(batch, -1));
    this.alertedRuns.add(batch);
    // bounded: the oldest runs go first (a Set iterates in insertion order)
    if (this.alertedRuns.size > ALERTED_RUNS_KEPT) this.alertedRuns.delete(this.alertedRuns.values().next().value as string);
    if (!extended) log.error({ alert: 'consecutive_missing', minutes: n, through: batch }, `${n} consecutive feed minutes missing`);
  }
}

/** How long the feed keeps a minute: one answered NotAvailableYet past it never will be. */
const FEED_KEPT_MS = 7 * 24 * 3_600_000;
/** A minute still not available this long after its time is late (they come ~60 min after): said at warn. */
const LATE_MS = 3 * 3_600_000;
/** The longest a Retry-After is waited before the minute is asked again (a day-long one would stall a run silently). */
const MAX_RATE_LIMIT_WAIT_MS = 5 * 60_000;

/** Downloads of one minute that did not decode before it is failed `BATCH_CORRUPT` (at most feed.attempts). */
const BAD_DOWNLOAD_TRIES = 3;

/** A finished batch's figures on the process's metrics. */
function countBatch(o: { status: string; lines: number; bytesDecoded: number }): void {
  record({ m: 'batch', outcome: o.status });
  if (o.lines) record({ m: 'received', stage: 'feed', n: o.lines });
  if (o.bytesDecoded) record({ m: 'decoded', n: o.bytesDecoded });
}
