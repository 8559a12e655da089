import { ELASTICSEARCH_MAX_DEPTH, valueDepth, type BehaviourDoc, type Pivots } from '../normalize/index.js';

/*
 * A document on its way from the feed stage to a store: its meta (what a store needs without
 * parsing it) and its canonical JSON. The feed stage makes them, the chunk codec carries them,
 * the index stage hands them to a store.
 */

/**
 * What a store needs to know of a document without parsing it: its identity, dates, pivots,
 * nesting depth and the fields the hunting reads group by. Chunks written before `verdicts`,
 * `md5` and `sha1` existed carry metas without them: stores must not rely on their presence
 * (see {@link hasHuntFields}).
 */
export interface DocMeta {
  id: string;
  sha256: string;
  sandbox_name: string;
  analysis_date: number | null;
  last_modification_date: number;
  pivots: Pivots;
  /** Deepest nesting of the document (levels of objects and arrays), measured when it was made. */
  depth: number;
  /** `attributes.verdicts`, strings only, unique, first-seen order. */
  verdicts: string[];
  /** `context_attributes.file_md5` lower-case, or null when absent or not 32 hex digits. */
  md5: string | null;
  /** `context_attributes.file_sha1` lower-case, or null when absent or not 40 hex digits. */
  sha1: string | null;
}

/**
 * A document as the index stage hands it to a store: its meta and its canonical JSON, serialized
 * once by the feed stage, as text or as the UTF-8 bytes a chunk carried (so the SQLite store
 * writes them without decoding and encoding them again). A store reads the meta; only a backend
 * that needs more (Elasticsearch's ECS projection) parses the JSON.
 */
export interface SinkDoc {
  meta: DocMeta;
  json: string | Buffer;
}

/** A document's JSON as text. */
export function jsonText(d: SinkDoc): string {
  return typeof d.json === 'string' ? d.json : d.json.toString('utf8');
}

/** A document's meta and JSON text (for documents that did not come from the feed stage). */
export function sinkDocOf(doc: BehaviourDoc, json?: string): SinkDoc {
  // past what any store accepts (and the recursive serializers survive): never serialized, the
  // store refuses it by its depth before reading the text
  const depth = valueDepth(doc, ELASTICSEARCH_MAX_DEPTH);
  const text = json ?? (depth > ELASTICSEARCH_MAX_DEPTH ? '' : JSON.stringify(doc));
  return { meta: metaOf(doc, depth), json: text };
}

/** The meta of a parsed document whose nesting depth is known. */
export function metaOf(doc: BehaviourDoc, depth: number): DocMeta {
  const d = (doc ?? {}) as Partial<BehaviourDoc>;
  return {
    id: d.id as string,
    sha256: d.sha256 as string,
    sandbox_name: d.sandbox_name as string,
    analysis_date: d.analysis_date ?? null,
    last_modification_date: d.last_modification_date as number,
    pivots: d.pivots as Pivots,
    depth,
    verdicts: verdictsOf(d.attributes),
    md5: hexDigest((d.context_attributes as Record<string, unknown> | undefined)?.file_md5, 32),
    sha1: hexDigest((d.context_attributes as Record<string, unknown> | undefined)?.file_sha1, 40),
  };
}

/** `attributes.verdicts` of a document as the stores index it: strings only, unique, first-seen order. */
export function verdictsOf(attributes: unknown): string[] {
  const v = (attributes as { verdicts?: unknown } | null | undefined)?.verdicts;
  return Array.isArray(v) ? [...new Set(v.filter((x): x is string => typeof x === 'string'))] : [];
}

/** `value` lower-cased when it is a hex digest of `length` digits, else null. */
export function hexDigest(value: unknown, length: 32 | 40 | 64): string | null {
  if (typeof value !== 'string' || value.length !== length) return null;
  const h = value.toLowerCase();
  return /^[0-9a-f]+$/.test(h) ? h : null;
}

/**
 * True when a meta carries the hunting fields; false for metas of chunks written before they
 * existed (still decoded and stored: the store derives the fields from the document instead).
 */
export function hasHuntFields(meta: DocMeta): boolean {
  const m = meta as Partial<DocMeta>;
  return Array.isArray(m.verdicts) && m.md5 !== undefined && m.sha1 !== undefined;
}
