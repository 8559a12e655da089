import { redactUrlCredentials } from '../errors/index.js';

export { redactUrlCredentials };

/** What a secret is replaced with in every log format. */
export const CENSOR = '[redacted]';

/** Field names whose value is a credential, wherever they occur (compared lower-case, letters only). */
const SECRET_SUFFIXES = ['apikey', 'password', 'passwd', 'secret', 'token', 'authorization'] as const;
// webhooks: the config's map of webhook URLs, whose paths and queries carry their tokens
const SECRET_NAMES = new Set(['cookie', 'setcookie', 'webhooks']);

const SECRET_FIELDS = ['apiKey', 'apikey', 'password', 'token', 'authorization', 'cookie'] as const;
const SECRET_HEADERS = ['headers["x-apikey"]', 'headers.authorization', 'headers["proxy-authorization"]', 'headers.cookie'] as const;

/**
 * The paths pino's own redaction censors: credential fields and request headers at the top level
 * and up to two levels down (`config.gti.apiKey`, `elasticsearch.password`, `req.headers.authorization`,
 * `err.config.headers["x-apikey"]`). pino applies them after our formatters, to the final field
 * names, so they are the guarantee for the `json` and `pretty` shapes; `scrubFields` (run in
 * `formatters`) catches what fixed paths cannot: any depth, any spelling, Error objects, and the
 * renamed fields of the `ecs` format.
 */
export const REDACT_PATHS: readonly string[] = [...SECRET_FIELDS, ...SECRET_HEADERS].flatMap((p) => [p, `*.${p}`, `*.*.${p}`]);

/** True when a field of this name holds a credential (`apiKey`, `x-apikey`, `ELASTIC_PASSWORD`, `Authorization`...). */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z]/g, '');
  return SECRET_NAMES.has(k) || SECRET_SUFFIXES.some((s) => k.endsWith(s));
}

// pino itself stops serializing a little deeper than this; a field past it is not written as is
const MAX_DEPTH = 10;

/**
 * A copy of a log call's fields (or a logger's bindings) with every credential censored: secret
 * field names at any depth, URL passwords in any string, and the message, stack, cause and own
 * fields of Error objects (kept Errors, so pino's and ECS's error serializers still apply). The
 * caller's objects are never modified.
 */
export function scrubFields(fields: Record<string, unknown>): Record<string, unknown> {
  return scrubRecord(fields, 0, new Set());
}

function scrub(value: unknown, depth: number, path: Set<object>): unknown {
  if (typeof value === 'string') return redactUrlCredentials(value);
  if (value === null || typeof value !== 'object') return value;
  if (path.has(value)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[...]';
  // URL#toJSON would write the password in clear
  if (value instanceof URL) return redactUrlCredentials(value.href);
  path.add(value);
  try {
    if (value instanceof Error) return scrubError(value, depth, path);
    if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1, path));
    // Date, Buffer and the like serialize themselves and hold no field names
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
    return scrubRecord(value as Record<string, unknown>, depth, path);
  } finally {
    path.delete(value);
  }
}

function scrubRecord(record: Record<string, unknown>, depth: number, path: Set<object>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record))
    out[k] = v !== undefined && v !== null && isSecretKey(k) ? CENSOR : scrub(v, depth + 1, path);
  return out;
}

/** Same prototype (type name, `instanceof Error`), every own property scrubbed: message, stack, cause, code, details... */
function scrubError(err: Error, depth: number, path: Set<object>): Error {
  const copy = Object.create(Object.getPrototypeOf(err) as object | null) as Error;
  for (const key of Object.getOwnPropertyNames(err)) {
    const d = Object.getOwnPropertyDescriptor(err, key);
    // `stack` is an accessor in some V8 versions: read it from the original
    const raw: unknown = d && 'value' in d ? d.value : (err as unknown as Record<string, unknown>)[key];
    const value = raw !== undefined && raw !== null && isSecretKey(key) ? CENSOR : scrub(raw, depth + 1, path);
    Object.defineProperty(copy, key, { value, enumerable: d?.enumerable ?? false, writable: true, configurable: true });
  }
  return copy;
}
