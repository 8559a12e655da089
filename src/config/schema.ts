import { z } from 'zod';

const positiveInt = z.number().int().positive();

/** Feed stage settings: how batches are read and decoded. */
const feedSchema = z
  .object({
    concurrency: positiveInt.default(1),
    maxLineBytes: positiveInt.default(32 * 1024 * 1024),
    dlqPrefixBytes: positiveInt.default(64 * 1024),
    decoder: z.enum(['auto', 'lbzip2', 'pbzip2', 'bzip2']).default('auto'),
    decoderThreads: z.number().int().min(0).default(0),
    attempts: positiveInt.default(5),
    backoffMs: positiveInt.default(2000),
    /** API source: a 404 minute is asked again this many times, this far apart, before it counts as missing. */
    missingRetries: z.number().int().min(0).default(3),
    missingRetryDelayMs: positiveInt.default(120_000),
    /** API source: wait before asking again for a minute answered NotAvailableYet. */
    notAvailableDelayMs: positiveInt.default(60_000),
    /** API source: wait after a 429 when the answer has no Retry-After. */
    rateLimitDelayMs: positiveInt.default(30_000),
    /** This many missing minutes in a row raise an alert. */
    missingAlertMinutes: positiveInt.default(5),
    /** `file_behaviours` or `file-behaviours` in the feed path. */
    pathSpelling: z.enum(['file_behaviours', 'file-behaviours']).default('file_behaviours'),
  })
  .strict();

/** Index stage settings: chunking, backpressure and sink retries. */
const indexSchema = z
  .object({
    concurrency: positiveInt.default(1),
    chunkMaxDocs: positiveInt.default(500),
    chunkMaxBytes: positiveInt.default(8 * 1024 * 1024),
    highWaterChunks: positiveInt.default(20),
    attempts: positiveInt.default(8),
    backoffMs: positiveInt.default(1000),
    sinkRetries: z.number().int().min(0).default(3),
  })
  .strict();

/** BullMQ worker lock settings: how fast a crashed worker's job is picked up again. */
const workerSchema = z
  .object({
    lockDurationMs: positiveInt.default(30_000),
    stalledIntervalMs: positiveInt.default(30_000),
    maxStalledCount: positiveInt.default(10),
    drainTimeoutMs: positiveInt.default(300_000),
  })
  .strict();

/** Upstream GTI API settings; the key comes from the environment and is never logged. */
const gtiSchema = z
  .object({
    apiKey: z.string().min(1).optional(),
    baseUrl: z.string().url().default('https://www.virustotal.com/api/v3'),
    xTool: z.string().optional(),
    user: z.string().min(1).optional(),
    group: z.string().min(1).optional(),
    timeoutMs: positiveInt.default(30_000),
  })
  .strict();

/** Live mode: when minutes are asked for. */
const liveSchema = z
  .object({
    lagMinutes: z.number().int().min(0).default(60),
    tickMs: positiveInt.default(15_000),
  })
  .strict();

export const configSchema = z
  .object({
    redisUrl: z.string().url().optional(),
    queuePrefix: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only')
      .default('sandtrail'),
    sink: z.string().min(1).default('sqlite:./sandtrail.db'),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    feed: feedSchema.default({}),
    index: indexSchema.default({}),
    worker: workerSchema.default({}),
    gti: gtiSchema.default({}),
    live: liveSchema.default({}),
  })
  .strict();

/** The validated, frozen configuration every module receives. */
export type Config = Readonly<{
  [K in keyof z.infer<typeof configSchema>]: Readonly<z.infer<typeof configSchema>[K]>;
}>;
/** Configuration as written in a file or assembled from env and flags, before defaults. */
export type ConfigInput = z.input<typeof configSchema>;
