import { stat } from 'node:fs/promises';
import { errorCode, isRetryable, messageOf, SandtrailError } from '../errors/index.js';
import { callWithRetry, type RetryOptions } from '../gti/index.js';
import { meteredClient, RunBudget } from '../lookup/index.js';
import { record } from '../metrics/index.js';
import type { Cluster, Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { stopsStage, UnrecoverableError, type Job, QueueWorker, type StageWorkerOptions } from '../queue/index.js';
import type { Store } from '../store/index.js';
import { blobPath } from './blobPath.js';
import { makeBlobDir, streamToBlob } from './downloadArtefact.js';
import { ARTEFACT_QUEUE, artefactRunKey, type ArtefactJobData, type ArtefactJobResult } from './names.js';

/** How long a run's download counts are kept (as long as the queue keeps finished jobs). */
const RUN_COUNTS_TTL_S = 7 * 24 * 3600;

/**
 * Downloads artefacts into the blob directory, one job per (report version, kind), apart from
 * indexing so a slow download never holds a chunk up. Feed links are fetched as the feed gave
 * them (the API key only goes to the API's own host; 0 API units, rule 3); lookups use
 * `/file_behaviours/{id}/{kind}` (1 unit, rule 1). A cut or truncated body is fetched again from
 * the start (in place, then by the job's attempts); the store records each finished file's path,
 * size and SHA-256.
 */
export class ArtefactWorker extends QueueWorker<ArtefactJobData, ArtefactJobResult> {
  constructor(o: StageWorkerOptions) {
    super(o, ARTEFACT_QUEUE, 'artefacts', o.config.artefacts.concurrency);
  }

  protected async process(
    job: Job<ArtefactJobData, ArtefactJobResult>,
    _token: string | undefined,
    signal?: AbortSignal,
  ): Promise<ArtefactJobResult> {
    const log = this.o.log.child({ stage: 'artefacts', behaviour: job.data.behaviourId, kind: job.data.kind, job: job.id });
    try {
      const r = await fetchArtefact({
        config: this.o.config,
        store: this.o.store,
        redis: this.o.queues.connection,
        data: job.data,
        signal,
        onRetry: (i) =>
          log.warn({ attempt: i.attempt, waitMs: Math.round(i.waitMs), code: i.code }, `artefact download retried: ${i.message}`),
      });
      if (!r.skipped) log.info({ size: r.size }, 'artefact stored');
      record({ m: 'artefact', kind: job.data.kind, outcome: r.skipped ? 'skipped' : 'stored', bytes: r.skipped ? 0 : r.size });
      await this.countForRun(job.data.run, 'completed');
      return r;
    } catch (err) {
      const code = errorCode(err);
      record({ m: 'artefact', kind: job.data.kind, outcome: code ?? 'error', bytes: 0 });
      if (code === 'GTI_AUTH' || code === 'SINK_AUTH') throw err;
      log.warn({ code, attempt: job.attemptsMade + 1, err: messageOf(err) }, 'artefact download failed');
      const final = !isRetryable(err) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      // a fault that stops the stage puts the job back: not this run's failure
      if (final && !stopsStage(code)) await this.countForRun(job.data.run, 'failed');
      if (!isRetryable(err)) throw new UnrecoverableError(`${code ?? 'ERROR'}: ${messageOf(err)}`);
      throw err;
    }
  }

  /** Counts a finished download for the run that asked (its summary reads these, not the whole queue's week). */
  private async countForRun(run: string | undefined, outcome: 'completed' | 'failed'): Promise<void> {
    if (!run) return;
    const key = artefactRunKey(this.o.config.queuePrefix, run);
    // one round trip; a count that cannot be written leaves the summary short, never the download failed
    await this.o.queues.connection
      .multi()
      .hincrby(key, outcome, 1)
      .expire(key, RUN_COUNTS_TTL_S)
      .exec()
      .catch(() => undefined);
  }
}

/** Kinds that are binary files: an answer starting with markup is no such file. */
const BINARY: ReadonlySet<string> = new Set(['pcap', 'evtx']);

/**
 * One artefact into the blob directory and its record into the store; what the worker runs for
 * each job and `fetch` runs inline, with the same retries either way. Nothing is requested when
 * the file is already there and recorded (a repeated job).
 */
export async function fetchArtefact(o: {
  config: Config;
  store: Store;
  redis: Redis | Cluster;
  data: ArtefactJobData;
  signal?: AbortSignal;
  /** Told about each download tried again (for a log line). */
  onRetry?: RetryOptions['onRetry'];
}): Promise<ArtefactJobResult> {
  const { config, store, data: d } = o;
  const path = blobPath(config.artefacts.dir, d.behaviourId, d.kind);
  const known = (await store.artefacts.list(d.behaviourId)).find((a) => a.kind === d.kind);
  const onDisk = known ? await stat(known.path).catch(() => null) : null;
  // the file of this report version, or of a newer one (an older version's job arrives late): kept
  const current = d.lastModified === undefined || (known?.lastModified !== undefined && known.lastModified >= d.lastModified);
  // (a file of no bytes is no artefact: an earlier version kept what an empty answer gave)
  if (known && known.size > 0 && onDisk?.size === known.size && current)
    return { path: known.path, size: known.size, sha256: known.sha256, skipped: true };
  // an artefact directory that cannot be written fails before the paid request, naming it
  await makeBlobDir(path);
  const budget = d.run
    ? new RunBudget(o.redis, RunBudget.keyOf(config.queuePrefix, d.run), d.maxApiUnits ?? Number.POSITIVE_INFINITY)
    : undefined;
  const { client } = meteredClient({ config, redis: o.redis, budget, signal: o.signal });
  const what = `${d.kind} of ${d.behaviourId}`;
  // a body cut mid-transfer, a reset, a 429 (after its Retry-After) or a 5xx: asked again from the
  // start, within gti.maxRetries (each request the service answered is a call, on the ledger);
  // streamToBlob leaves no partial file behind a failed try
  const blob = await callWithRetry(
    async () => {
      const opened =
        d.source === 'feed_link' && d.link
          ? await client.openLink(d.link, o.signal, `/feeds/file_behaviours/{token}/${d.kind}`)
          : await client.openDownload(`/file_behaviours/${encodeURIComponent(d.behaviourId)}/${d.kind}`, o.signal);
      if (!opened) throw new SandtrailError('GTI_NOT_FOUND', `${what}: not found (a feed link expires with its batch)`);
      return streamToBlob(opened.body, opened.bytes, path, d.maxBytes ?? config.artefacts.maxBytes, what, { binary: BINARY.has(d.kind) });
    },
    { retries: config.gti.maxRetries, backoffMs: config.gti.backoffMs, signal: o.signal, onRetry: o.onRetry },
  );
  await store.artefacts.record({
    behaviourId: d.behaviourId,
    kind: d.kind,
    ...blob,
    source: d.source,
    fetchedAt: Date.now(),
    ...(d.lastModified !== undefined ? { lastModified: d.lastModified } : {}),
  });
  return { ...blob, skipped: false };
}
