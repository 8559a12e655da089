import { z } from 'zod';
import { artefactsSchema, httpSchema, lookupSchema, serveSchema, sqliteSchema } from './serviceSchemas.js';

const positiveInt = z.number().int().positive();

/** Replicas of new indices: a whole number, or `auto` (0-1 by the data nodes); numeric strings (from the environment) are numbers. */
const replicaCount = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
  z.custom<number | 'auto'>((v) => v === 'auto' || (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 100), {
    message: 'a whole number of replicas from 0, or auto',
  }),
);

/** Feed stage settings: how batches are read and decoded. */
const feedSchema = z
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
const indexSchema = z
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
const workerSchema = z
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
const gtiSchema = z
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
const liveSchema = z
  .object({
    lagMinutes: z.number().int().min(0).default(60).describe('Live mode asks for a minute this long after it ends.'),
    tickMs: positiveInt.default(15_000).describe('How often the live scheduler looks for newly publishable minutes.'),
    retryFailedMs: positiveInt
      .default(300_000)
      .describe(
        'A live minute that failed (its tries spent: the API down, a refused download link, a store fault) is run again this long after it failed, each further run waiting twice as long (at most 6 hours), until it succeeds or leaves the feed retention; the cursor waits before it meanwhile.',
      ),
  })
  .strict();

/**
 * Elasticsearch backend (`store: es:URL`). Secrets come from the environment
 * (ELASTICSEARCH_API_KEY, ELASTICSEARCH_USERNAME/PASSWORD) and are never logged or stored.
 */
const elasticsearchSchema = z
  .object({
    /** Base64 `id:key` API key; preferred over username/password. */
    apiKey: z.string().min(1).optional().describe('Base64 id:key API key (preferred; never logged or stored).'),
    username: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Basic-auth user instead of an API key. es:https://user:pass@host also works; the password is masked wherever the spec is shown.',
      ),
    password: z.string().optional().describe('Basic-auth password (never logged).'),
    /** PEM file of the CA that signed the cluster certificate (self-managed TLS). */
    caFile: z.string().min(1).optional().describe("PEM of the CA that signed a self-managed cluster's certificate."),
    /** SHA-256 fingerprint of the cluster CA (what Elasticsearch prints at first start), instead of caFile. */
    caFingerprint: z
      .string()
      .min(1)
      .optional()
      .describe("SHA-256 fingerprint of that CA (as printed at the cluster's first start), instead of caFile."),
    /** `verify` (default) or `insecure` (skip certificate checks; lab clusters only). */
    tlsVerify: z.enum(['verify', 'insecure']).default('verify').describe('insecure skips certificate checks (lab clusters only).'),
    /** Every index, template and alias name starts with this (several deployments can share a cluster). */
    indexPrefix: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'lower-case letters, digits, . _ - only, starting with a letter or digit')
      .max(100)
      // acme-behaviours-eu's indices would match acme's day-index pattern (acme-behaviours-*)
      .refine(
        (p) => !/-behaviours(-|$)/.test(p),
        'must not hold "-behaviours-" or end in "-behaviours": its indices would fall under another prefix\'s day indices',
      )
      .default('sandtrail')
      .describe(
        'Prefix of every index, template and alias (<prefix>-behaviours, <prefix>-dead-letters, <prefix>-batches...), so deployments can share a cluster.',
      ),
    /** Upper bound of one bulk request body. */
    flushBytes: positiveInt
      .default(5 * 1024 * 1024)
      .describe('Upper bound of one bulk request body (a single larger document goes alone).'),
    /** Bulk requests in flight at once per store call (one call per group of chunks written together). */
    bulkConcurrency: positiveInt
      .default(2)
      .describe(
        'Bulk requests in flight per store call (one call per group of chunks written together; at most index.concurrency calls at once per index worker).',
      ),
    requestTimeoutMs: positiveInt.default(60_000).describe('Timeout of one request.'),
    /** Client-level retries of connection errors and 502/503/504 before the sink classifies them. */
    maxRetries: z
      .number()
      .int()
      .min(0)
      .default(2)
      .describe('Client-level retries of connection errors and 502/503/504 before the sink classifies the failure.'),
    compression: z.enum(['none', 'gzip']).default('none').describe('gzip request bodies (worth it over a WAN).'),
    /** `auto`: the first write runs the idempotent setup; `manual`: only `sandtrail es setup` does (least-privilege writers). */
    setup: z
      .enum(['auto', 'manual'])
      .default('auto')
      .describe(
        'auto: the first write of a process runs the idempotent setup (templates, indices, mapping upgrades; the lifecycle policy and the shard settings only when missing: es setup changes those); manual: only sandtrail es setup does (writers then need no template privileges).',
      ),
    shards: positiveInt
      .default(1)
      .describe(
        'Primary shards of each new daily behaviour index: one holds a day of up to about 5 M behaviours (8.6 GB of primary store a million, measured; Elastic advises 10–50 GB a shard), the whole feed at 1–3 M a day; past that, ceil(M behaviours a day / 5).',
      ),
    replicas: replicaCount
      .default('auto')
      .describe(
        'Replicas of new indices: auto (default) is 1 on a cluster of two data nodes or more and 0 on one (index.auto_expand_replicas 0-1); a number is kept as set, and a writer refuses to start when the cluster has fewer data nodes than replicas + 1.',
      ),
    maxPrimaryShardSize: z
      .string()
      .regex(/^\d+(\.\d+)?(b|kb|mb|gb|tb)$/, 'a size with its unit, e.g. 30gb or 500mb')
      .default('30gb')
      .describe(
        'The size a primary shard of a daily behaviour index should stay under: doctor warns about an index past it and says how many shards new days need (raise elasticsearch.shards).',
      ),
    refreshInterval: z
      .string()
      .regex(/^(-1|\d+(ms|s|m|h))$/, 'e.g. 5s, 30s, 1m or -1')
      .default('5s')
      .describe('index.refresh_interval of behaviour indices (-1 during a huge backfill, then back).'),
    /** Mapped-field budget per index; with `dynamic: false` only sandtrail's own fields count. */
    totalFieldsLimit: positiveInt
      .default(2000)
      .describe("index.mapping.total_fields.limit; with dynamic: false only sandtrail's ~120 mapped fields and objects count."),
  })
  .strict();

/**
 * Retention days: a whole number from 1, or `off` (keep everything). Numeric strings (from the
 * environment) are read as numbers; anything else names the accepted forms.
 */
const retentionDays = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*-?\d+(\.\d*)?\s*$/.test(v) ? Number(v) : v),
  z.custom<number | 'off'>((v) => v === 'off' || (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 36_500), {
    message: 'a whole number of days from 1 to 36500, or off',
  }),
);

/**
 * Retention, by each record's own date: a behaviour by its last_modification_date (so a backfill
 * of old minutes is kept exactly as long as it would have been live), bookkeeping records by the
 * time they were written.
 */
const retentionSchema = z
  .object({
    days: retentionDays
      .default('off')
      .describe(
        "Days a behaviour is kept after its last_modification_date, or off. Elasticsearch: the ILM policy's delete phase on the daily behaviour indices; SQLite: removed in small steps by the index stage (and by sandtrail prune).",
      ),
    bookkeepingDays: retentionDays
      .optional()
      .describe('Days dead letters, batch-log rows, watch hits and artefact records are kept, or off; unset: the same as retention.days.'),
    stepRows: positiveInt
      .default(2000)
      .describe('Rows one retention step removes at most (one short write transaction, so ingestion never waits long).'),
    intervalMs: positiveInt
      .default(60_000)
      .describe('How often an index worker runs a retention step while retention is on (steps follow at once while expired rows remain).'),
  })
  .strict();

/** Kibana, for `sandtrail kibana import`; credentials default to the Elasticsearch ones. */
const kibanaSchema = z
  .object({
    url: z.string().url().optional().describe('Kibana base URL for kibana import.'),
    space: z.string().min(1).optional().describe('Kibana space to import into (default space when unset).'),
    apiKey: z.string().min(1).optional().describe('Kibana API key; the Elasticsearch credentials are used when unset.'),
    username: z.string().min(1).optional().describe('Kibana basic-auth user.'),
    password: z.string().optional().describe('Kibana basic-auth password (never logged).'),
  })
  .strict();

/** One Redis URL: redis:// or rediss://, a host, maybe credentials, port and database. */
const REDIS_URL = /^rediss?:\/\/[^\s,]+$/;

/**
 * Whether a Redis URL reads as one: nothing after the database number. A `#`, `/` or `?` left
 * unencoded in a password ends the authority early, so the client would dial a host made of the
 * password's head and messages would quote its tail.
 */
function redisUrlValid(raw: string): boolean {
  const u = raw.trim();
  if (!REDIS_URL.test(u)) return false;
  try {
    const url = new URL(u);
    return url.hostname !== '' && url.hash === '' && url.search === '' && /^\/?\d*$/.test(url.pathname);
  } catch {
    return false;
  }
}

/** A webhook's name: what a watch keeps in the store in place of the URL. */
export const WEBHOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** A webhook URL: http or https, no `user:password@` (fetch refuses them; a token goes in the path or query). */
function webhookUrlValid(raw: string): boolean {
  try {
    const u = new URL(raw);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

export const configSchema = z
  .object({
    redisUrl: z
      .string()
      .refine(
        (v) => v.split(',').every(redisUrlValid),
        'redis://[user:password@]host[:port][/db] or rediss://…, comma-separated for a cluster (a password holding # / ? % or , is percent-encoded: %23 %2F %3F %25 %2C)',
      )
      .optional()
      .describe(
        'Redis ≥ 6.2 (maxmemory-policy noeviction): redis://[user:password@]host:port, rediss:// for TLS; for a Redis Cluster a few of its nodes, comma-separated. Without it, CLI commands start a private redis-server on loopback for their duration; workers require it.',
      ),
    redisCluster: z
      .boolean()
      .default(false)
      .describe(
        'redisUrl names nodes of a Redis Cluster (implied when it lists several). The queue prefix then becomes a hash tag ({sandtrail}), so every key sandtrail writes lives in one slot.',
      ),
    queuePrefix: z
      .string()
      .regex(/^(\{[A-Za-z0-9_.-]+\}|[A-Za-z0-9_.-]+)$/, 'letters, digits, _ . - only (or such a name in braces)')
      .default('sandtrail')
      .describe('BullMQ key prefix; separate pipelines can share one Redis. On a cluster it is wrapped in braces (a hash tag).'),
    store: z
      .string()
      .min(1)
      .default('sqlite:./sandtrail.db')
      .describe(
        'Store for documents, dead letters and the batch log: sqlite:FILE or es:URL (ELASTICSEARCH_URL=U means es:U; SANDTRAIL_STORE wins over it). The former name sink (--sink, SANDTRAIL_SINK, "sink" in a config file) is still accepted; store wins when both are given.',
      ),
    logLevel: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('pino level; logs go to stderr in logFormat.'),
    logFormat: z
      .enum(['json', 'pretty', 'ecs'])
      .default('json')
      .describe(
        "Log lines on stderr: json (one pino JSON object per line), pretty (one readable line per entry, coloured only on a terminal) or ecs (Elastic Common Schema JSON: @timestamp, log.level, message, ecs.version, process.pid, host.hostname, error.*; sandtrail's own fields as sandtrail.stage, sandtrail.batch, sandtrail.worker...). Credentials are redacted in every format, URL passwords included.",
      ),
    feed: feedSchema.default({}),
    index: indexSchema.default({}),
    worker: workerSchema.default({}),
    gti: gtiSchema.default({}),
    lookup: lookupSchema.default({}),
    http: httpSchema.default({}),
    serve: serveSchema.default({}),
    artefacts: artefactsSchema.default({}),
    live: liveSchema.default({}),
    elasticsearch: elasticsearchSchema.default({}),
    kibana: kibanaSchema.default({}),
    retention: retentionSchema.default({}),
    sqlite: sqliteSchema.default({}),
    webhooks: z
      .record(
        z.string().regex(WEBHOOK_NAME, 'a webhook name is lower-case letters, digits, _ and - (at most 64)'),
        z.string().refine(webhookUrlValid, 'an http:// or https:// URL without user:password@ (a token goes in its path or query)'),
      )
      .default({})
      .describe(
        'Webhooks by name, each an http(s) URL: `watch add --webhook NAME` keeps only the name in the store, and every process that notifies (index workers, backfill, dlq replay, watch add --retro) reads the URL, often holding its secret in the path or query, from its own configuration. In a config file {"webhooks": {"soc": "https://..."}}; in the environment one variable per webhook: SANDTRAIL_WEBHOOK_SOC_TEAM=URL is webhooks.soc_team.',
      ),
  })
  .strict();

/** The validated, frozen configuration every module receives. */
export type Config = Readonly<{
  [K in keyof z.infer<typeof configSchema>]: Readonly<z.infer<typeof configSchema>[K]>;
}>;
/** Configuration as written in a file or assembled from env and flags, before defaults. */
export type ConfigInput = z.input<typeof configSchema> & {
  /** Former name of `store`, still accepted everywhere (`store` wins when both are given). */
  sink?: string;
};
