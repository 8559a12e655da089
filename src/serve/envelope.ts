/** The upstream API's error codes sandtrail serve answers with, and their HTTP status. */
export const V3_ERRORS = {
  NotFoundError: 404,
  BadRequestError: 400,
  InvalidArgumentError: 400,
  AuthenticationRequiredError: 401,
  WrongCredentialsError: 401,
  ForbiddenError: 403,
  // not among the upstream's codes (its API has no write paths here to refuse): named as they are
  MethodNotAllowedError: 405,
  TooManyRequestsError: 429,
  TransientError: 503,
} as const;
export type V3ErrorCode = keyof typeof V3_ERRORS;

/** `{"error": {"code", "message"}}`, as the v3 API answers errors. */
export function v3Error(code: V3ErrorCode, message: string): { error: { code: V3ErrorCode; message: string } } {
  return { error: { code, message } };
}

/** An object in the upstream shape: type, id, attributes, links.self (and what else the store kept). */
export function v3Object(
  type: string,
  id: string,
  attributes: unknown,
  self: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return { type, id, attributes, links: { self }, ...extra };
}

/** An opaque cursor naming the last item a page gave (items sort by it): the next page starts after it. */
export function encodeAfterCursor(last: string): string {
  return Buffer.from(`a${last}`).toString('base64url');
}

/** The item a cursor of encodeAfterCursor names, or null when it is not one of ours. */
export function decodeAfterCursor(cursor: string): string | null {
  const s = Buffer.from(cursor, 'base64url').toString('utf8');
  return s.startsWith('a') && s.length > 1 && encodeAfterCursor(s.slice(1)) === cursor ? s.slice(1) : null;
}

/** `limit` of a collection request: 1..40 (the upstream maximum), default 10; null when invalid. */
export function parseLimit(raw: unknown, fallback = 10): number | null {
  if (raw === undefined) return fallback;
  // digits only: Number() would also read "0x2", "1e1" and " 5"
  if (typeof raw !== 'string' || !/^\d{1,3}$/.test(raw)) return null;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= 40 ? n : null;
}

/** The cursor of the watch hits after `hit` (the last a page gave). */
export function encodeHitCursor(hit: { at: number; lastModified: number; behaviourId: string }): string {
  return encodeAfterCursor(JSON.stringify([hit.at, hit.lastModified, hit.behaviourId]));
}

/** The hit a watch-hits cursor names, null when it is not one of ours. */
export function decodeHitCursor(cursor: string): { at: number; lastModified: number; behaviourId: string } | null {
  const text = decodeAfterCursor(cursor);
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    if (Array.isArray(v) && v.length === 3 && Number.isSafeInteger(v[0]) && Number.isSafeInteger(v[1]) && typeof v[2] === 'string') {
      return { at: v[0] as number, lastModified: v[1] as number, behaviourId: v[2] };
    }
  } catch {
    // not JSON: not one of ours
  }
  return null;
}

/**
 * The feed's relationships as stored, without their `links`: those name the upstream API
 * (www.virustotal.com), which a client following them would send its key to, and this API
 * serves no relationship routes of its own.
 */
export function withoutLinks(extra: Record<string, unknown>): Record<string, unknown> {
  const rel = extra.relationships;
  if (!rel || typeof rel !== 'object') return extra;
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(rel as Record<string, unknown>)) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const { links: _links, ...rest } = value as Record<string, unknown>;
      out[name] = rest;
    } else out[name] = value;
  }
  return { ...extra, relationships: out };
}

/** An MD5, SHA-1 or SHA-256 in hex, as the API takes a file's id. */
export function isFileHash(h: string): boolean {
  return /^[0-9a-fA-F]+$/.test(h) && [32, 40, 64].includes(h.length);
}
