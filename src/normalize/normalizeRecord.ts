/**
 * Record-level normalization: identity (strict), attributes (lenient), feed-line extras, dates
 * and pivots. Never throws on data: every failure is a typed rejection, every repair a warning.
 */
import { SCHEMA_VERSION, type BehaviourDoc, type NormalizeResult, type RejectCode } from './BehaviourDoc.js';
import type { CanonicalAttributes } from './CanonicalAttributes.js';
import { coerceHash, coerceString } from './coerceScalar.js';
import { computePivots } from './computePivots.js';
import { normalizeAttributes } from './normalizeAttributes.js';
import { parseBehaviourId, stripTimestampSuffix, type BehaviourId } from './parseBehaviourId.js';
import { WarningLog, isRecord, kindOf, setOwn } from './WarningLog.js';
import { describeError, readRawEnvelope } from './readEnvelope.js';
import { DEFAULT_MAX_DEPTH, ELASTICSEARCH_MAX_DEPTH, textDepth, valueDepth } from './jsonDepth.js';

export interface NormalizeOptions {
  /** Records nested deeper than this are refused with `too_deep` (default DEFAULT_MAX_DEPTH; at most 1,000). */
  maxDepth?: number;
  /**
   * `last_modification_date` of a record with neither date (Unix seconds): the start of the feed
   * minute that published it, so retention keeps it as long as that minute's records; 0 otherwise.
   */
  undatedAt?: number;
}

/** Envelope keys with a meaning here; others are reported (`dropped_field`) and not kept. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['type', 'id', 'attributes', 'links', 'context_attributes', 'relationships']);
/** Keys of a `{data: ...}` wrapper that are the API's paging envelope, not the record's. */
const WRAPPER_KEYS: ReadonlySet<string> = new Set(['data', 'links', 'meta']);
/** Feed-line extras a wrapped line may carry beside `data` rather than inside it. */
const EXTRA_KEYS = ['context_attributes', 'relationships'] as const;
/** context_attributes hashes lower-cased like every other hash. */
const CONTEXT_HASH_KEYS: ReadonlySet<string> = new Set(['file_md5', 'file_sha1', 'file_sha256']);
/** context_attributes the feed documents as text: the type tag and the artefact links. */
const CONTEXT_TEXT_KEYS: ReadonlySet<string> = new Set(['file_type_tag', 'html_report', 'pcap', 'evtx', 'memdump']);

function reject(code: RejectCode, path: string, message: string): NormalizeResult {
  return { ok: false, rejection: { code, path, message } };
}

/** Identity established from the envelope, before any attribute work. */
interface Envelope {
  rec: Record<string, unknown>;
  /** JSON path of the behaviour object: `$`, or `$.data` when the line was wrapped. */
  base: string;
  id: BehaviourId;
  attributes: Record<string, unknown> | undefined;
  /** What lay beside `data` in a wrapped line. */
  wrapper?: Record<string, unknown>;
}

function readEnvelope(value: unknown): Envelope | NormalizeResult {
  const raw = readRawEnvelope(value, 'file_behaviour');
  if ('code' in raw) return { ok: false, rejection: raw };
  const { rec, base, rawId, attributes, wrapper } = raw;
  const id = parseBehaviourId(rawId);
  if (typeof id === 'string') return reject('bad_id', `${base}.id`, id);
  return { rec, base, id, attributes, ...(wrapper ? { wrapper } : {}) };
}

/**
 * Shallow copy of context_attributes: the file hashes lower-cased, the fields the feed documents
 * (hashes, type tag, artefact links) kept only as text, so a report is stored alike on every store
 * (Elasticsearch refuses a whole document with an object where it indexes a keyword).
 */
function normalizeContext(ctx: Record<string, unknown>, path: string, w: WarningLog): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(ctx)) {
    const v = ctx[k];
    if (v === undefined) continue;
    if (CONTEXT_HASH_KEYS.has(k)) {
      const h = coerceHash(v, path, k, w);
      if (h !== undefined) setOwn(out, k, h);
    } else if (CONTEXT_TEXT_KEYS.has(k)) {
      const s = coerceString(v, path, k, w);
      if (s !== undefined) setOwn(out, k, s);
    } else setOwn(out, k, v);
  }
  return out;
}

function buildDoc(env: Envelope, undatedAt: number | undefined): NormalizeResult {
  const { rec, base, id } = env;
  const w = new WarningLog();
  if (id.hexChanged) w.add('lowercased', `${base}.id`, 'sha256 part of the id was not lower-case');

  const apath = `${base}.attributes`;
  let attributes: CanonicalAttributes;
  if (env.attributes === undefined) {
    w.add('missing_attributes', apath, 'record has no attributes: treated as {}');
    attributes = {};
  } else {
    attributes = normalizeAttributes(env.attributes, apath, w);
  }

  // The attribute is authoritative when usable; the id's sandbox part is the fallback. Either way
  // without a private analysis's timestamp: hunters count reports per sandbox, not per analysis.
  let sandboxName = id.sandboxName;
  const attrName = attributes.sandbox_name;
  if (typeof attrName === 'string' && attrName.trim() !== '') {
    sandboxName = stripTimestampSuffix(attrName);
    if (sandboxName !== id.sandboxName) {
      w.add('sandbox_mismatch', `${apath}.sandbox_name`, "attributes.sandbox_name differs from the id's sandbox part");
    }
  }

  const analysisDate = typeof attributes.analysis_date === 'number' ? attributes.analysis_date : null;
  let lastModified = attributes.last_modification_date;
  if (typeof lastModified !== 'number') {
    lastModified = analysisDate ?? undatedAt ?? 0;
    w.add(
      'missing_date',
      `${apath}.last_modification_date`,
      analysisDate !== null
        ? 'no last_modification_date: using analysis_date'
        : undatedAt === undefined
          ? 'no last_modification_date nor analysis_date: using 0'
          : "no last_modification_date nor analysis_date: using the start of the batch's minute",
    );
  }

  const doc: BehaviourDoc = {
    schema_version: SCHEMA_VERSION,
    id: id.id,
    sha256: id.sha256,
    sandbox_name: sandboxName,
    analysis_date: analysisDate,
    last_modification_date: lastModified,
    pivots: computePivots(attributes),
    attributes,
  };

  for (const k of Object.keys(rec)) {
    if (ENVELOPE_KEYS.has(k)) continue;
    w.addAt('dropped_field', base, k, 'unknown top-level field not kept (only attributes, context_attributes and relationships are)');
  }
  const at = extrasOf(env, w);
  const ctx = at.context_attributes.value;
  const ctxBase = at.context_attributes.base;
  if (isRecord(ctx)) doc.context_attributes = normalizeContext(ctx, `${ctxBase}.context_attributes`, w);
  else if (ctx !== undefined && ctx !== null)
    w.addAt('dropped_field', ctxBase, 'context_attributes', `expected an object, got ${kindOf(ctx)}`);
  const rel = at.relationships.value;
  if (isRecord(rel)) doc.relationships = rel;
  else if (rel !== undefined && rel !== null)
    w.addAt('dropped_field', at.relationships.base, 'relationships', `expected an object, got ${kindOf(rel)}`);

  return { ok: true, doc, warnings: w.finish(), depth: 0 };
}

/**
 * Each feed-line extra and the JSON path of the object holding it: the record's own, or, in a
 * wrapped line, the one beside `data` (the feed's lines carry them beside the behaviour object).
 * What else lies beside `data` is reported, not kept.
 */
function extrasOf(env: Envelope, w: WarningLog): Record<(typeof EXTRA_KEYS)[number], { value: unknown; base: string }> {
  const { rec, base, wrapper } = env;
  const pick = (k: (typeof EXTRA_KEYS)[number]): { value: unknown; base: string } => {
    const inner = rec[k];
    const outer = wrapper?.[k];
    if (outer === undefined || outer === null) return { value: inner, base };
    if (inner === undefined || inner === null) return { value: outer, base: '$' };
    w.addAt('dropped_field', '$', k, `given both inside and beside data: the one inside (${base}.${k}) is kept`);
    return { value: inner, base };
  };
  if (wrapper) {
    for (const k of Object.keys(wrapper)) {
      if (WRAPPER_KEYS.has(k) || (EXTRA_KEYS as readonly string[]).includes(k)) continue;
      w.addAt('dropped_field', '$', k, 'unknown field beside data not kept (only context_attributes and relationships are)');
    }
  }
  return { context_attributes: pick('context_attributes'), relationships: pick('relationships') };
}

/**
 * Normalizes one parsed feed record (a file_behaviour object, bare or wrapped as `{data}`).
 * Never throws: hostile values (throwing getters, proxies, deep nesting) end as a rejection too.
 */
export function normalizeRecord(value: unknown, opts: NormalizeOptions = {}): NormalizeResult {
  const maxDepth = limitOf(opts);
  let depth = 0;
  try {
    depth = valueDepth(value, maxDepth);
  } catch {
    // a hostile value (throwing getter, proxy): the normalizer's own guards name the field
  }
  return depth > maxDepth ? tooDeep(maxDepth) : normalizeChecked(value, depth, opts.undatedAt);
}

/** The nesting limit in force: never above what the recursive serializers downstream survive. */
function limitOf(opts: NormalizeOptions): number {
  return Math.min(opts.maxDepth ?? DEFAULT_MAX_DEPTH, ELASTICSEARCH_MAX_DEPTH);
}

function tooDeep(maxDepth: number): NormalizeResult {
  return reject('too_deep', '$', `record is nested more than ${maxDepth} levels deep (feed.maxDepth)`);
}

function normalizeChecked(value: unknown, depth: number, undatedAt: number | undefined): NormalizeResult {
  let env: Envelope | NormalizeResult;
  try {
    env = readEnvelope(value);
  } catch (err) {
    return reject('not_object', '$', `record could not be read: ${describeError(err)}`);
  }
  if ('ok' in env) return env;
  try {
    const r = buildDoc(env, undatedAt);
    if (r.ok) r.depth = depth;
    return r;
  } catch (err) {
    return reject('bad_attributes', `${env.base}.attributes`, `attributes could not be normalized: ${describeError(err)}`);
  }
}

/** Parses one JSON line (a leading BOM is ignored) and normalizes it. Never throws. */
export function normalizeLine(text: string, opts: NormalizeOptions = {}): NormalizeResult {
  if (typeof text !== 'string') return reject('not_json', '$', `expected a line of text, got ${kindOf(text)}`);
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const maxDepth = limitOf(opts);
  // checked on the text, before the parser builds a structure nothing else could walk
  const depth = textDepth(body, maxDepth);
  if (depth > maxDepth) return tooDeep(maxDepth);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    return reject('not_json', '$', `invalid JSON: ${describeError(err)}`);
  }
  return normalizeChecked(value, depth, opts.undatedAt);
}
