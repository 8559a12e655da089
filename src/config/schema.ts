import { z } from 'zod';

const positiveInt = z.number().int().positive();

/** Feed stage settings: how batches are read and decoded. */
const feedSchema = z
  .object({
    concurrency: positiveInt.default(1),
    maxLineBytes: positiveInt.default(32 * 1024 * 1024),
    /** Leading bytes of a rejected line kept in its dead letter (with its true size and SHA-256). */
    dlqPrefixBytes: positiveInt.default(64 * 1024),
    /** Dead-letter bytes one batch may write before it is failed as a whole (DEAD_LETTERS_EXCEEDED). */
    dlqMaxBatchBytes: positiveInt.default(64 * 1024 * 1024),
    /** Decoded bytes one batch may produce before it is failed as a whole (BATCH_TOO_LARGE): stops decompression bombs. */
    maxBatchBytes: positiveInt.default(16 * 1024 * 1024 * 1024),
    /** Records nested deeper are dead-lettered `too_deep` (Elasticsearch's own parser stops at 1,000). */
    maxDepth: z.number().int().min(2).max(990).default(200),
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

/**
 * Elasticsearch backend (`sink: es:URL`). Secrets come from the environment
 * (ELASTICSEARCH_API_KEY, ELASTICSEARCH_USERNAME/PASSWORD) and are never logged or stored.
 */
const elasticsearchSchema = z
  .object({
    /** Base64 `id:key` API key; preferred over username/password. */
    apiKey: z.string().min(1).optional(),
    username: z.string().min(1).optional(),
    password: z.string().optional(),
    /** PEM file of the CA that signed the cluster certificate (self-managed TLS). */
    caFile: z.string().min(1).optional(),
    /** SHA-256 fingerprint of the cluster CA (what Elasticsearch prints at first start), instead of caFile. */
    caFingerprint: z.string().min(1).optional(),
    /** `verify` (default) or `insecure` (skip certificate checks; lab clusters only). */
    tlsVerify: z.enum(['verify', 'insecure']).default('verify'),
    /** Every index, template and alias name starts with this (several deployments can share a cluster). */
    indexPrefix: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'lower-case letters, digits, . _ - only, starting with a letter or digit')
      .max(100)
      .default('sandtrail'),
    /** Upper bound of one bulk request body. */
    flushBytes: positiveInt.default(5 * 1024 * 1024),
    /** Bulk requests in flight at once per index job. */
    bulkConcurrency: positiveInt.default(2),
    requestTimeoutMs: positiveInt.default(60_000),
    /** Client-level retries of connection errors and 502/503/504 before the sink classifies them. */
    maxRetries: z.number().int().min(0).default(2),
    compression: z.enum(['none', 'gzip']).default('none'),
    /** `auto`: the first write runs the idempotent setup; `manual`: only `sandtrail es setup` does (least-privilege writers). */
    setup: z.enum(['auto', 'manual']).default('auto'),
    shards: positiveInt.default(1),
    replicas: z.number().int().min(0).default(1),
    refreshInterval: z
      .string()
      .regex(/^(-1|\d+(ms|s|m|h))$/, 'e.g. 5s, 30s, 1m or -1')
      .default('5s'),
    /** Mapped-field budget per index; with `dynamic: false` only sandtrail's own fields count. */
    totalFieldsLimit: positiveInt.default(2000),
  })
  .strict();

/** Kibana, for `sandtrail kibana import`; credentials default to the Elasticsearch ones. */
const kibanaSchema = z
  .object({
    url: z.string().url().optional(),
    space: z.string().min(1).optional(),
    apiKey: z.string().min(1).optional(),
    username: z.string().min(1).optional(),
    password: z.string().optional(),
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
    elasticsearch: elasticsearchSchema.default({}),
    kibana: kibanaSchema.default({}),
  })
  .strict();

/** The validated, frozen configuration every module receives. */
export type Config = Readonly<{
  [K in keyof z.infer<typeof configSchema>]: Readonly<z.infer<typeof configSchema>[K]>;
}>;
/** Configuration as written in a file or assembled from env and flags, before defaults. */
export type ConfigInput = z.input<typeof configSchema>;
