import { z } from 'zod';
import { positiveInt } from './serviceSchemas.js';

/** Feed stage settings: how batches are read and decoded. */
export const feedSchema = z
  .object({
    concurrency: positiveInt
      .default(1)
      .describe(
        'Batches one feed worker reads at once. Where its chunks are handed over in memory (backfill, run, lookup), up to two more batches already read wait meanwhile for their commit, which they share.',
      ),
    maxLineBytes: positiveInt
      .default(32 * 1024 * 1024)
      .describe('Line-size cap; longer lines are dead-lettered (line_too_long) without being buffered.'),
    /** Leading bytes of a rejected line kept in its dead letter (with its true size and SHA-256). */
    dlqPrefixBytes: positiveInt
      .default(64 * 1024)
      .describe(
        'Bytes of a rejected line kept in its dead letter (with its true size and SHA-256); longer lines need their batch to be replayed.',
      ),
    /** Dead-letter bytes one batch may write before it is failed as a whole (DEAD_LETTERS_EXCEEDED). */
    dlqMaxBatchBytes: positiveInt
      .default(64 * 1024 * 1024)
      .describe(
        'Dead-letter bytes one batch may write; past it the batch is failed with DEAD_LETTERS_EXCEEDED (a file that is not a feed batch cannot fill the store).',
      ),
    /** Decoded bytes one batch may produce before it is failed as a whole (BATCH_TOO_LARGE): stops decompression bombs. */
    maxBatchBytes: positiveInt
      .default(16 * 1024 * 1024 * 1024)
      .describe('Decoded bytes one batch may produce; past it the batch is failed with BATCH_TOO_LARGE (stops decompression bombs).'),
    /** Records nested deeper are dead-lettered `too_deep` (Elasticsearch's own parser stops at 1,000). */
    maxDepth: z
      .number()
      .int()
      .min(2)
      .max(990)
      .default(200)
      .describe(
        "Records nested deeper are dead-lettered too_deep by the normalizer, the feed stage and both stores (2..990: Elasticsearch's parser stops at 1,000).",
      ),
    decoder: z
      .enum(['auto', 'lbzip2', 'pbzip2', 'bzip2'])
      .default('auto')
      .describe('bzip2 decoder: auto (lbzip2, else pbzip2, else bzip2), or one of them.'),
    decoderThreads: z
      .number()
      .int()
      .min(0)
      .default(1)
      .describe(
        'Threads per lbzip2/pbzip2 process; 0 = all cores. One costs the least CPU: it decodes faster than the stage reads, and more threads contend with the pipeline for the same cores.',
      ),
    attempts: positiveInt.default(5).describe('Tries of a feed job (read or decode errors) before the batch is failed.'),
    backoffMs: positiveInt.default(2000).describe('First retry delay of a feed job (exponential).'),
    /** API source: a 404 minute is asked again this many times, this far apart, before it counts as missing. */
    missingRetries: z
      .number()
      .int()
      .min(0)
      .default(3)
      .describe('API source: a 404 minute is asked again this many times before it is recorded missing.'),
    missingRetryDelayMs: positiveInt.default(120_000).describe('API source: delay between those asks (the grace period).'),
    /** API source: wait before asking again for a minute answered NotAvailableYet. */
    notAvailableDelayMs: positiveInt
      .default(60_000)
      .describe('API source: wait before asking again for a minute answered NotAvailableYet (no attempt spent).'),
    /** API source: wait after a 429 when the answer has no Retry-After. */
    rateLimitDelayMs: positiveInt.default(30_000).describe('API source: wait after a 429 without Retry-After (no attempt spent).'),
    /** This many missing minutes in a row raise an alert. */
    missingAlertMinutes: positiveInt
      .default(5)
      .describe('This many consecutive missing minutes raise an alert: one error log line per run of them, and status.'),
    /** `file_behaviours` or `file-behaviours` in the feed path. */
    pathSpelling: z
      .enum(['file_behaviours', 'file-behaviours'])
      .default('file_behaviours')
      .describe('Feed path segment: file_behaviours or file-behaviours.'),
  })
  .strict();

/** Index stage settings: chunking, backpressure and sink retries. */
export const indexSchema = z
  .object({
    // 16 chunks of up to 4 MB: on the 1 GB minute, commits of up to ~4,000 documents write 18% fewer
    // bytes than 8 chunks did (9.1-9.6 against 11.3 GB) for ~20 MB more at the index worker's peak
    concurrency: positiveInt
      .default(16)
      .describe('Chunks one index worker holds at once; those ready together are written in one store call (one SQLite transaction).'),
    // A feed worker that keeps its index worker busy sends a chunk every ~250 ms: waiting 1 s lets
    // ~4 share a commit, and the 200 MB benchmark feed writes 0.76 GB instead of 1.26 GB to SQLite.
    commitWaitMs: z
      .number()
      .int()
      .min(0)
      .default(1000)
      .describe(
        "How long a chunk ready to write waits for the worker's other chunks in flight to share its store call; it is written at once when no feed batch is being read or waits and no index job waits (the end of a backfill, of a live minute).",
      ),
    chunkMaxDocs: positiveInt.default(500).describe('Documents per index job.'),
    chunkMaxBytes: positiveInt.default(4 * 1024 * 1024).describe('Uncompressed bytes per index job.'),
    highWaterChunks: positiveInt.default(20).describe('Feed workers pause while this many chunks wait (bounds Redis memory).'),
    // 32 MiB: a 1 GB minute through backfill peaks at 386 MB RSS (436 with 64 MiB, for 17% less
    // time); on feeds of many minutes no slower than 64 MiB (0.92x the time, paired runs)
    handoffMaxBytes: positiveInt
      .default(32 * 1024 * 1024)
      .describe(
        'Where the index stage runs in the same process (backfill, run, lookup), the bytes of chunks handed to it in memory and not yet stored, at most: the feed stage waits beyond it (one chunk always goes).',
      ),
    attempts: positiveInt
      .default(8)
      .describe(
        "Tries of an index job whose documents the store refuses for the time being (busy, overloaded); after the last one the chunk's batch is failed, nothing is dead-lettered.",
      ),
    storeFaultAttempts: positiveInt
      .default(3)
      .describe(
        'Tries of an index job that meets a store fault that may pass (disk full, an I/O error, a flood-stage block), at most index.attempts: with index.backoffMs 1000 the batch fails about 3 s after the fault, so a run on a full disk ends at once with the cause instead of waiting for space only an operator frees.',
      ),
    backoffMs: positiveInt.default(1000).describe('Retry delay base for index jobs and retryable items (exponential, jittered).'),
    sinkRetries: z.number().int().min(0).default(3).describe('In-job retries of items the sink reports retryable.'),
  })
  .strict();

/** BullMQ worker lock settings: how fast a crashed worker's job is picked up again. */
export const workerSchema = z
  .object({
    lockDurationMs: positiveInt.default(30_000).describe("Job lock; a killed worker's job is taken over after it expires."),
    stalledIntervalMs: positiveInt.default(30_000).describe('How often workers look for stalled jobs.'),
    maxStalledCount: positiveInt.default(10).describe('Stalls tolerated before a job is failed.'),
    drainTimeoutMs: positiveInt.default(300_000).describe('A drain that takes longer than this turns into a forced stop.'),
    redisWaitMs: positiveInt
      .default(300_000)
      .describe(
        'How long a backfill waits for a Redis that stopped answering before it ends, its unfinished minutes failed with REDIS_UNAVAILABLE; long-running workers wait for it as long as it takes.',
      ),
    idleWarnMs: positiveInt
      .default(60_000)
      .describe('backfill --no-workers logs a warning this often while no job finishes (no fleet worker may be running).'),
  })
  .strict();

/** Upstream GTI API settings; the key comes from the environment and is never logged. */
export const gtiSchema = z
  .object({
    apiKey: z.string().min(1).optional().describe('GTI API key (sent as x-apikey; never logged, never in job data, errors or the store).'),
    baseUrl: z
      .string()
      .url()
      // fetch refuses such a URL and quotes it whole in its error: refused here, naming no part of it
      .refine((v) => {
        try {
          const u = new URL(v);
          return (u.protocol === 'https:' || u.protocol === 'http:') && u.username === '' && u.password === '';
        } catch {
          return false;
        }
      }, 'an http:// or https:// URL without user or password (the API key is the credential)')
      .default('https://www.virustotal.com/api/v3')
      .describe('Versioned API base.'),
    xTool: z
      .string()
      .min(1)
      .default('sandtrail.sandtrail.0.1')
      .describe('x-tool header value (org.product.major.minor); private file reports carry gti_assessment only with it.'),
    user: z
      .string()
      .min(1)
      .optional()
      .describe("GTI user id the key belongs to: the ledger's user and quota check's default (default in the ledger when unset)."),
    group: z.string().min(1).optional().describe("The user's group: every unit is also counted for it (rule 8)."),
    timeoutMs: positiveInt
      .default(30_000)
      .describe('Timeout of one API request; a download must begin its answer within it too, and its body then has 20× it.'),
    requestsPerMinute: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe(
        "API requests per minute shared by every process on the same Redis (lookups, fetches, private reports, artefact endpoints; not feed reads). 0: no limit of sandtrail's own; set your licence's per-minute allowance.",
      ),
    maxRetries: z
      .number()
      .int()
      .min(0)
      .default(5)
      .describe(
        'Retries of one API request on 429 (after its Retry-After), 5xx and cut connections (an answer that is not the JSON asked for: one); 401/403/404 are never retried.',
      ),
    backoffMs: positiveInt.default(1000).describe('First backoff between API retries when no Retry-After is given (doubles, with jitter).'),
  })
  .strict();

/** Live mode: when minutes are asked for. */
export const liveSchema = z.object({
  lagMinutes: z.number().int().min(0).default(60).describe('Live mode asks for a minute this long after it ends.'),
  tickMs: positiveInt.default(15_000).describe('How often the live scheduler looks for newly publishable minutes.'),
  retryFailedMs: positiveInt
    .default(300_000)
    .describe(
      'A live minute that failed (its tries spent: the API down, a refused download link, a store fault) is run again this long after it failed, each further run waiting twice as long (at most 6 hours), until it succeeds or leaves the feed retention; the cursor waits before it meanwhile.',
    ),
});
