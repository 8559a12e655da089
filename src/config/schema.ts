import { z } from 'zod';
import { artefactsSchema, httpSchema, lookupSchema, serveSchema, sqliteSchema } from './serviceSchemas.js';
import { feedSchema, gtiSchema, indexSchema, liveSchema, workerSchema } from './stageSchemas.js';
import { elasticsearchSchema, kibanaSchema, retentionSchema } from './storeSchemas.js';

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
