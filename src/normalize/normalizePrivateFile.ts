/**
 * Normalization of a private file report (GET /private/files/{sha256}): identity strict,
 * attributes lenient, with the behaviour normalizer's warning and rejection codes. Never throws
 * on data: every failure is a typed rejection, every repair a warning.
 */
import type { RejectCode } from './BehaviourDoc.js';
import { describeError, readRawEnvelope } from './readEnvelope.js';
import { DEFAULT_MAX_DEPTH, ELASTICSEARCH_MAX_DEPTH, valueDepth } from './jsonDepth.js';
import { PRIVATE_FILE_ATTRIBUTES } from './privateFileAttributes.js';
import { PRIVATE_FILE_SCHEMA_VERSION, type PrivateFileDoc, type PrivateFileResult, type TridEntry } from './PrivateFileDoc.js';
import { WarningLog, setOwn } from './WarningLog.js';

export interface PrivateFileOptions {
  /** When the report was fetched, epoch seconds (default: now; a fraction is truncated). */
  fetchedAt?: number;
  /** Reports nested deeper are refused with `too_deep` (default DEFAULT_MAX_DEPTH; at most 1,000). */
  maxDepth?: number;
}

const SHA256_RE = /^[0-9a-fA-F]{64}$/;
/** Envelope keys with a meaning here; others are reported (`dropped_field`) and not kept. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['type', 'id', 'attributes', 'links']);

function reject(code: RejectCode, path: string, message: string): PrivateFileResult {
  return { ok: false, rejection: { code, path, message } };
}

interface Envelope {
  rec: Record<string, unknown>;
  /** JSON path of the private_file object: `$`, or `$.data` for the API response. */
  base: string;
  /** Lower-case sha256. */
  id: string;
  idChanged: boolean;
  attributes: Record<string, unknown> | undefined;
}

function readEnvelope(value: unknown): Envelope | PrivateFileResult {
  const raw = readRawEnvelope(value, 'private_file');
  if ('code' in raw) return { ok: false, rejection: raw };
  const { rec, base, rawId, attributes } = raw;
  // the id is the upsert key: refused rather than repaired (no trimming), only lower-cased
  if (!SHA256_RE.test(rawId)) return reject('bad_id', `${base}.id`, 'id must be a SHA-256: 64 hex characters');
  const id = rawId.toLowerCase();
  return { rec, base, id, idChanged: id !== rawId, attributes };
}

/** `attributes.sha256`, which must name the same file as the id; the id wins otherwise. */
function checkSha256(v: unknown, env: Envelope, apath: string, w: WarningLog): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v === 'string' && v.toLowerCase() === env.id) {
    if (v !== env.id) w.addAt('lowercased', apath, 'sha256', 'hash was not lower-case');
  } else {
    w.addAt('dropped_field', apath, 'sha256', 'attributes.sha256 differs from the id: the id is kept');
  }
  return true;
}

function normalizeAttributes(env: Envelope, w: WarningLog): Record<string, unknown> {
  const apath = `${env.base}.attributes`;
  const out: Record<string, unknown> = {};
  if (env.attributes === undefined) {
    w.add('missing_attributes', apath, 'record has no attributes: treated as {}');
    return out;
  }
  const raw = env.attributes;
  for (const k of Object.keys(raw)) {
    const v = raw[k];
    if (k === 'sha256') {
      if (checkSha256(v, env, apath, w)) out.sha256 = env.id;
      continue;
    }
    const coerce = PRIVATE_FILE_ATTRIBUTES.get(k);
    if (coerce === undefined) {
      if (v !== undefined) setOwn(out, k, v);
    } else {
      const r = coerce(v, apath, k, w);
      if (r !== undefined) out[k] = r;
    }
  }
  return out;
}

function buildDoc(env: Envelope, fetchedAt: number): PrivateFileResult {
  const { rec, base, id } = env;
  const w = new WarningLog();
  if (env.idChanged) w.add('lowercased', `${base}.id`, 'id was not lower-case');
  for (const k of Object.keys(rec)) {
    if (ENVELOPE_KEYS.has(k)) continue;
    w.addAt('dropped_field', base, k, 'unknown top-level field not kept (only attributes is)');
  }
  const a = normalizeAttributes(env, w);
  const str = (k: string): string | null => (typeof a[k] === 'string' ? a[k] : null);
  const doc: PrivateFileDoc = {
    schema_version: PRIVATE_FILE_SCHEMA_VERSION,
    type: 'private_file',
    id,
    sha256: id,
    sha1: str('sha1'),
    md5: str('md5'),
    size: typeof a.size === 'number' ? a.size : null,
    magic: str('magic'),
    tags: (a.tags as string[] | undefined) ?? [],
    exiftool: (a.exiftool as Record<string, string> | undefined) ?? {},
    trid: (a.trid as TridEntry[] | undefined) ?? [],
    vhash: str('vhash'),
    ssdeep: str('ssdeep'),
    gti_assessment: a.gti_assessment ?? null,
    attributes: a,
    fetched_at: fetchedAt,
  };
  return { ok: true, doc, warnings: w.finish() };
}

/**
 * A copy of the document made only of JSON: what every store will hold and give back, so a
 * stored report reads back deep-equal to the normalized one, and nothing of the input (a shared
 * reference, an accessor) survives into it.
 */
function jsonOnly(doc: PrivateFileDoc): PrivateFileDoc {
  return JSON.parse(JSON.stringify(doc)) as PrivateFileDoc;
}

function fetchedAtOf(opts: PrivateFileOptions): number {
  const t = opts.fetchedAt;
  if (t === undefined) return Math.floor(Date.now() / 1000);
  // a caller's mistake, not data: fail loudly rather than store a report that can never be replaced
  if (typeof t !== 'number' || !Number.isFinite(t) || t < 0 || t > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`fetchedAt must be epoch seconds (a non-negative number), got ${String(t)}`);
  }
  return Math.floor(t);
}

/**
 * Normalizes one private file report: the API response `{data: {type: 'private_file', id,
 * attributes, links}}` or the bare `data` object. Never throws on data: hostile values
 * (throwing getters, proxies, BigInt, deep nesting) end as rejections. Throws a RangeError only
 * for an invalid `opts.fetchedAt`.
 */
export function normalizePrivateFile(value: unknown, opts: PrivateFileOptions = {}): PrivateFileResult {
  const fetchedAt = fetchedAtOf(opts);
  const maxDepth = Math.min(opts.maxDepth ?? DEFAULT_MAX_DEPTH, ELASTICSEARCH_MAX_DEPTH);
  let depth = 0;
  try {
    depth = valueDepth(value, maxDepth);
  } catch {
    // a hostile value (throwing getter, proxy): the guards below name what failed
  }
  if (depth > maxDepth) return reject('too_deep', '$', `record is nested more than ${maxDepth} levels deep`);
  let env: Envelope | PrivateFileResult;
  try {
    env = readEnvelope(value);
  } catch (err) {
    return reject('not_object', '$', `record could not be read: ${describeError(err)}`);
  }
  if ('ok' in env) return env;
  let r: PrivateFileResult;
  try {
    r = buildDoc(env, fetchedAt);
  } catch (err) {
    return reject('bad_attributes', `${env.base}.attributes`, `attributes could not be normalized: ${describeError(err)}`);
  }
  if (!r.ok) return r;
  try {
    return { ...r, doc: jsonOnly(r.doc) };
  } catch (err) {
    return reject('unserializable', `${env.base}.attributes`, `report cannot be serialized as JSON: ${describeError(err)}`);
  }
}
