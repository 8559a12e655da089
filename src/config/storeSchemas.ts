import { z } from 'zod';
import { positiveInt } from './serviceSchemas.js';

/** Replicas of new indices: a whole number, or `auto` (0-1 by the data nodes); numeric strings (from the environment) are numbers. */
const replicaCount = z.preprocess(
  (v) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v),
  z.custom<number | 'auto'>((v) => v === 'auto' || (Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 100), {
    message: 'a whole number of replicas from 0, or auto',
  }),
);

/**
 * Elasticsearch backend (`store: es:URL`). Secrets come from the environment
 * (ELASTICSEARCH_API_KEY, ELASTICSEARCH_USERNAME/PASSWORD) and are never logged or stored.
 */
export const elasticsearchSchema = z
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
export const retentionSchema = z
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
export const kibanaSchema = z
  .object({
    url: z.string().url().optional().describe('Kibana base URL for kibana import.'),
    space: z.string().min(1).optional().describe('Kibana space to import into (default space when unset).'),
    apiKey: z.string().min(1).optional().describe('Kibana API key; the Elasticsearch credentials are used when unset.'),
    username: z.string().min(1).optional().describe('Kibana basic-auth user.'),
    password: z.string().optional().describe('Kibana basic-auth password (never logged).'),
  })
  .strict();
