import { z } from 'zod';

/** A whole number from 1: counts, sizes and durations. */
export const positiveInt = z.number().int().positive();

/** Lookups: behaviour reports fetched per file hash through their own queue. */
export const lookupSchema = z
  .object({
    concurrency: positiveInt.default(2).describe('Hashes one lookup worker fetches at once.'),
    pageSize: positiveInt.max(40).default(40).describe('limit= of /files/{id}/behaviours pages (the API allows up to 40).'),
    attempts: positiveInt.default(3).describe('Tries of one hash job before it is reported failed.'),
    backoffMs: positiveInt.default(5000).describe('First backoff between tries of a hash job.'),
  })
  .strict();

/** Artefacts (pcap, evtx, memdump, html report) downloaded into a blob directory. */
export const artefactsSchema = z
  .object({
    dir: z
      .string()
      .min(1)
      .default('./artefacts')
      .describe(
        "Blob directory: <dir>/<sha256[0:2]>/<sha256>/<sandbox>/<kind>.<ext>, <sandbox> the behaviour id after its SHA-256 (a private analysis's timestamp included). An answer of no bytes, or a web page where a pcap or evtx was expected, is never kept.",
      ),
    maxBytes: positiveInt
      .default(512 * 1024 * 1024)
      .describe('Size cap of one artefact; a bigger one is refused (ARTEFACT_TOO_LARGE) and nothing of it is kept.'),
    concurrency: positiveInt.default(2).describe('Downloads one artefact worker runs at once.'),
    attempts: positiveInt.default(5).describe('Tries of one download (a cut or truncated body is retried from the start).'),
    backoffMs: positiveInt.default(2000).describe('First backoff between tries of a download.'),
  })
  .strict();

/** The operations HTTP server of long-running processes: metrics, health, the queue dashboard. */
export const httpSchema = z
  .object({
    port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .optional()
      .describe(
        'Port of /metrics, /healthz, /readyz and /queues in long-running processes (run, worker *, and backfill/lookup while they run); unset: no HTTP server; 0: any free port (logged).',
      ),
    host: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe('Address to bind; beyond loopback the server refuses to start without http.token or http.username/http.password.'),
    token: z.string().min(16).optional().describe('Bearer token every route but /healthz requires (16+ characters; never logged).'),
    username: z.string().min(1).optional().describe('Basic-auth user instead of a token.'),
    password: z.string().min(8).optional().describe('Basic-auth password (8+ characters; never logged).'),
    dashboardWritable: z
      .boolean()
      .default(false)
      .describe('Let the /queues dashboard retry, promote and remove jobs; read-only by default.'),
    requestTimeoutMs: z
      .number()
      .int()
      .min(1000)
      .default(30_000)
      .describe('A request (headers and body) not received whole within this is answered 408 and its connection closed.'),
  })
  .strict()
  // one of the two alone would leave every route open, without a word
  .refine((h) => (h.username === undefined) === (h.password === undefined), {
    message: 'http.username and http.password go together: set both, or neither (http.token alone is the other way)',
  });

/** `sandtrail serve`: the v3-compatible read API over the store. */
export const serveSchema = z
  .object({
    port: z.number().int().min(0).max(65535).default(8080).describe('Port of sandtrail serve (0: any free port).'),
    host: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe('Address of sandtrail serve; beyond loopback it refuses to start without serve.apiKeys.'),
    apiKeys: z
      .string()
      .superRefine((v, ctx) => {
        // the strength http.token asks; the key itself is never repeated in the message
        const keys = v.split(',').map((k) => k.trim());
        keys.forEach((k, i) => {
          if (k !== '' && k.length < 16)
            ctx.addIssue({
              code: 'custom',
              message: `key ${i + 1} of ${keys.length} has ${k.length} characters: each key needs 16 or more`,
            });
        });
      })
      .optional()
      .describe(
        'Comma-separated keys of sandtrail serve, sent in the x-apikey header or (TAXII clients) as the password of HTTP Basic (16+ characters each; never logged; never the GTI key); unset: no key asked, loopback only.',
      ),
    publicUrl: z
      .string()
      .url()
      .refine((u) => /^https?:$/.test(new URL(u).protocol) && !new URL(u).search && !new URL(u).hash, {
        message: 'an http(s) URL without query or fragment',
      })
      .optional()
      .describe(
        "The URL clients reach sandtrail serve by (behind a proxy or TLS terminator): its answers' links start with it; unset: path-absolute links with serve.apiKeys, the request's own (loopback) Host without.",
      ),
  })
  .strict();

/** The embedded SQLite store. */
export const sqliteSchema = z
  .object({
    busyTimeoutMs: z
      .number()
      .int()
      .min(100)
      .default(15_000)
      .describe(
        "How long a write to a SQLite store waits for another connection's lock. Past it the store counts as locked by another process (STORE_LOCKED, a store fault: a few tries, then the batch fails naming the store); the pipeline's own commits hold the lock far shorter.",
      ),
  })
  .strict();
