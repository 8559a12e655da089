import type { CollectionObjectQuery, VersionMatch } from '../store/index.js';

/** TAXII 2.1's media type, of every answer; STIX 2.1's, of the objects a collection holds. */
export const TAXII_MEDIA_TYPE = 'application/taxii+json;version=2.1';
export const STIX_MEDIA_TYPE = 'application/stix+json;version=2.1';

/** A page holds at most this many objects, and stops before this many bytes (it holds one at least). */
export const TAXII_MAX_LIMIT = 1000;
export const TAXII_DEFAULT_LIMIT = 1000;
export const TAXII_PAGE_BYTES = 8 * 1024 * 1024;

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;

/** A TAXII timestamp (RFC 3339, UTC, `Z`) as epoch microseconds; null when it is none. */
export function parseTimestamp(s: string): number | null {
  const m = TIMESTAMP.exec(s);
  if (!m) return null;
  const seconds = Date.parse(`${m[1]}Z`);
  if (Number.isNaN(seconds) || new Date(seconds).toISOString().slice(0, 19) !== m[1]) return null;
  const micros = Number(((m[2] ?? '') + '000000').slice(0, 6));
  return seconds * 1000 + micros;
}

/** Epoch microseconds as a TAXII timestamp with microsecond precision. */
export function formatTimestamp(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const base = new Date(ms).toISOString().slice(0, 19);
  return `${base}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
}

/** The query string of a TAXII request, as Fastify parses it (a repeated parameter is a list). */
export type TaxiiQuery = Record<string, string | string[] | undefined>;

/** What a request asked that cannot be answered: the parameter and why (a 400). */
export class TaxiiParamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TaxiiParamError';
  }
}

const ALLOWED = new Set(['added_after', 'limit', 'next', 'match[id]', 'match[type]', 'match[version]', 'match[spec_version]']);

function single(q: TaxiiQuery, name: string): string | undefined {
  const v = q[name];
  if (Array.isArray(v)) throw new TaxiiParamError(`${name} is given more than once`);
  return v;
}

/** A comma-separated match list, values trimmed, empty ones refused. */
function list(q: TaxiiQuery, name: string): string[] | undefined {
  const v = single(q, name);
  if (v === undefined) return undefined;
  const values = v.split(',').map((x) => x.trim());
  if (values.some((x) => x === '')) throw new TaxiiParamError(`${name} holds an empty value`);
  return values;
}

/** What a TAXII object listing asked for, checked (unknown parameters are refused, not ignored). */
export interface TaxiiRequest {
  query: CollectionObjectQuery;
  /** match[spec_version] names no version the collection holds (2.1): nothing matches. */
  none: boolean;
}

/**
 * Reads `added_after`, `limit`, `next` and the `match[...]` filters of an objects, manifest or
 * versions request. `next` is the date of the last object of the page before: the next page
 * starts after it, with the same filters.
 */
export function taxiiRequest(q: TaxiiQuery, defaults: { version: VersionMatch }): TaxiiRequest {
  for (const k of Object.keys(q)) if (!ALLOWED.has(k)) throw new TaxiiParamError(`unknown parameter ${k}`);
  const addedRaw = single(q, 'added_after');
  const added = addedRaw === undefined ? undefined : parseTimestamp(addedRaw);
  if (added === null) throw new TaxiiParamError('added_after must be a timestamp such as 2026-12-01T00:00:00.000Z');
  const limitRaw = single(q, 'limit');
  const limit = limitRaw === undefined ? TAXII_DEFAULT_LIMIT : /^\d{1,7}$/.test(limitRaw) ? Number(limitRaw) : Number.NaN;
  if (!(limit >= 1)) throw new TaxiiParamError('limit must be a whole number, 1 or more');
  const nextRaw = single(q, 'next');
  if (nextRaw !== undefined && !/^\d{1,17}$/.test(nextRaw)) throw new TaxiiParamError('next is not one this server gave');
  const next = nextRaw === undefined ? undefined : Number(nextRaw);
  const versionList = list(q, 'match[version]');
  let version = defaults.version;
  if (versionList) {
    version = {};
    for (const v of versionList) {
      if (v === 'first' || v === 'last' || v === 'all') version[v] = true;
      else if (parseTimestamp(v) !== null) (version.versions ??= []).push(v);
      else throw new TaxiiParamError(`match[version] takes first, last, all or timestamps, not "${v}"`);
    }
  }
  const specVersions = list(q, 'match[spec_version]');
  const ids = list(q, 'match[id]');
  const types = list(q, 'match[type]');
  return {
    none: specVersions !== undefined && !specVersions.includes('2.1'),
    query: {
      addedAfter: Math.max(added ?? 0, next ?? 0),
      limit: Math.min(limit, TAXII_MAX_LIMIT),
      maxBytes: TAXII_PAGE_BYTES,
      version,
      ...(ids ? { ids } : {}),
      ...(types ? { types } : {}),
    },
  };
}

/** Whether an Accept header takes TAXII 2.1 (absent, a wildcard, or the TAXII type without another version). */
export function acceptsTaxii(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  return accept.split(',').some((part) => {
    const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (type === '*/*' || type === 'application/*') return true;
    if (type !== 'application/taxii+json') return false;
    const version = params.find((p) => p.startsWith('version='));
    return version === undefined || version === 'version=2.1';
  });
}
