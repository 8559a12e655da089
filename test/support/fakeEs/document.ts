/**
 * Parsing of a document the way the index's mapping dictates: dynamic true/false/strict, object,
 * nested, flattened and enabled:false objects, multi-fields, normalizers, ignore_above,
 * ignore_malformed, and the real per-document errors. `_source` itself is kept verbatim.
 */
import { NUMERIC, countFields, indexSetting, isObjectType, normalizers, typeOf, type IndexedDoc } from './mapping.js';
import { clone, fail, isObj, type Cause, type Obj } from './util.js';
import { ISO, isCause, leafValue, textTokens } from './values.js';

const MALFORMABLE = new Set([...NUMERIC, 'date', 'date_nanos', 'ip', 'boolean']);

const NEEDS_DYNAMIC = new Error('dynamic mapping needed');

export interface ParsedDoc {
  doc: IndexedDoc;
  ignored: string[];
  /** The index's new mappings when the document added dynamic fields. */
  mappings?: Obj;
}

function push<T>(map: Map<string, T[]>, key: string, v: T): void {
  const a = map.get(key);
  if (a) a.push(v);
  else map.set(key, [v]);
}

class DocParser {
  readonly doc: IndexedDoc = { fields: new Map(), nested: new Map() };
  readonly ignored = new Set<string>();
  private readonly norms: Map<string, (s: string) => string>;
  private nestedDocs = 0;
  private readonly nestedLimit: number;

  constructor(
    private readonly root: Obj,
    settings: Obj,
    private readonly id: string,
    private readonly json: string,
    private readonly mutable: boolean,
  ) {
    this.norms = normalizers(settings);
    this.nestedLimit = Number(indexSetting(settings, 'mapping.nested_objects.limit') ?? 10000);
  }

  private col(path: string): number {
    const key = path.slice(path.lastIndexOf('.') + 1);
    const i = this.json.indexOf(`"${key}":`);
    return i < 0 ? 1 : i + key.length + 4;
  }

  private failField(path: string, type: string, v: unknown, cause: Cause): never {
    const preview = typeof v === 'object' ? JSON.stringify(v) : String(v);
    fail(
      400,
      'document_parsing_exception',
      `[1:${this.col(path)}] failed to parse field [${path}] of type [${type}] in document with id '${this.id}'. Preview of field's value: '${preview}'`,
      { caused_by: cause },
    );
  }

  object(o: Obj, owner: Obj, path: string, dynamic: string, out: IndexedDoc): void {
    for (const [rawKey, raw] of Object.entries(o)) {
      if (rawKey === '') fail(400, 'document_parsing_exception', `[1:${this.col(path)}] field name cannot be an empty string`);
      const dot = rawKey.indexOf('.');
      const key = dot > 0 ? rawKey.slice(0, dot) : rawKey;
      const v = dot > 0 ? { [rawKey.slice(dot + 1)]: raw } : raw;
      const p = path ? `${path}.${key}` : key;
      const props = isObj(owner.properties) ? owner.properties : undefined;
      const m = props?.[key];
      if (isObj(m)) {
        this.value(v, m, p, key, dynamic, out);
        continue;
      }
      if (dynamic === 'false' || dynamic === 'runtime') continue;
      if (dynamic === 'strict') {
        fail(
          400,
          'strict_dynamic_mapping_exception',
          `[1:${this.col(p)}] mapping set to strict, dynamic introduction of [${key}] within [${path || '_doc'}] is not allowed`,
        );
      }
      const dm = this.dynamicMapping(v);
      if (!dm) continue;
      if (!this.mutable) throw NEEDS_DYNAMIC;
      ((owner.properties as Obj | undefined) ?? (owner.properties = {}))[key] = dm;
      this.value(v, dm, p, key, dynamic, out);
    }
  }

  private dynamicMapping(v: unknown): Obj | undefined {
    if (Array.isArray(v)) return this.dynamicMapping(v.find((x) => x !== null && x !== undefined));
    if (typeof v === 'boolean') return { type: 'boolean' };
    if (typeof v === 'number') return { type: Number.isInteger(v) ? 'long' : 'float' };
    if (typeof v === 'string') {
      if (this.root.date_detection !== false && /^\d{4}-\d{2}-\d{2}/.test(v) && ISO.test(v)) return { type: 'date' };
      return { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } };
    }
    if (isObj(v)) return Object.keys(v).length > 0 ? { properties: {} } : { type: 'object' };
    return undefined;
  }

  private value(v: unknown, m: Obj, path: string, key: string, dynamic: string, out: IndexedDoc): void {
    const type = typeOf(m);
    if (v === null || v === undefined) {
      if (m.null_value === undefined || isObjectType(type)) return;
      v = m.null_value;
    }
    if (Array.isArray(v)) {
      for (const x of v) this.value(x, m, path, key, dynamic, out);
      return;
    }
    const childDynamic = m.dynamic === undefined ? dynamic : String(m.dynamic);
    if (type === 'object') {
      if (m.enabled === false) return;
      if (!isObj(v)) this.concreteForObject(path, key);
      this.object(v, m, path, childDynamic, out);
      return;
    }
    if (type === 'nested') {
      if (!isObj(v)) this.concreteForObject(path, key);
      if (++this.nestedDocs > this.nestedLimit) {
        fail(
          400,
          'document_parsing_exception',
          `[1:${this.col(path)}] The number of nested documents has exceeded the allowed limit of [${this.nestedLimit}]. This limit can be set by changing the [index.mapping.nested_objects.limit] index level setting.`,
        );
      }
      const sub: IndexedDoc = { fields: new Map(), nested: new Map() };
      this.object(v, m, path, childDynamic, sub);
      push(out.nested, path, sub);
      if (m.include_in_parent === true || m.include_in_root === true) this.object(v, m, path, childDynamic, out);
      return;
    }
    if (type === 'flattened') {
      if (!isObj(v)) {
        this.failField(path, type, v, {
          type: 'parsing_exception',
          reason: `Failed to parse object: expecting token of type [START_OBJECT] but found [VALUE_STRING]`,
        });
      }
      this.flattened(v, m, path, '', out);
      return;
    }
    if (isObj(v)) {
      if (MALFORMABLE.has(type) && m.ignore_malformed === true) {
        this.ignored.add(path);
        return;
      }
      this.failField(path, type, v, { type: 'illegal_state_exception', reason: `Can't get text on a START_OBJECT at 1:${this.col(path)}` });
    }
    this.leaf(v, m, type, path, out);
    if (isObj(m.fields)) {
      for (const [sub, sm] of Object.entries(m.fields)) if (isObj(sm)) this.value(v, sm, `${path}.${sub}`, sub, dynamic, out);
    }
  }

  private concreteForObject(path: string, key: string): never {
    fail(
      400,
      'document_parsing_exception',
      `[1:${this.col(path)}] object mapping for [${path}] tried to parse field [${key}] as object, but found a concrete value`,
    );
  }

  private leaf(v: unknown, m: Obj, type: string, path: string, out: IndexedDoc): void {
    if (type === 'keyword') {
      const s = String(v);
      if (m.ignore_above !== undefined && s.length > Number(m.ignore_above)) {
        this.ignored.add(path);
        return;
      }
      const norm = typeof m.normalizer === 'string' ? this.norms.get(m.normalizer) : undefined;
      const term = norm ? norm(s) : s;
      const bytes = Buffer.byteLength(term);
      if (bytes > 32766 && m.index !== false) {
        const why = `bytes can be at most 32766 in length; got ${bytes}`;
        fail(
          400,
          'illegal_argument_exception',
          `Document contains at least one immense term in field="${path}" (whose UTF8 encoding is longer than the max length 32766), all of which were skipped. Please correct the analyzer to not produce such terms. The prefix of the first immense term is: '${term.slice(0, 30)}...', original message: ${why}`,
          { caused_by: { type: 'max_bytes_length_exceeded_exception', reason: why } },
        );
      }
      push(out.fields, path, term);
      return;
    }
    if (type === 'text' || type === 'match_only_text') {
      for (const t of textTokens(String(v))) push(out.fields, path, t);
      return;
    }
    if (!MALFORMABLE.has(type)) return; // accepted, not indexed by the fake
    const r = leafValue(type, m, v);
    if (isCause(r)) {
      if (m.ignore_malformed === true) {
        this.ignored.add(path);
        return;
      }
      this.failField(path, type, v, r);
    }
    push(out.fields, path, r);
  }

  private flattened(o: Obj, m: Obj, root: string, prefix: string, out: IndexedDoc): void {
    for (const [k, raw] of Object.entries(o)) {
      const key = prefix ? `${prefix}.${k}` : k;
      for (const x of Array.isArray(raw) ? (raw.flat(Infinity) as unknown[]) : [raw]) {
        if (isObj(x)) this.flattened(x, m, root, key, out);
        else if (x !== null && x !== undefined) {
          const s = String(x);
          if (m.ignore_above !== undefined && s.length > Number(m.ignore_above)) {
            this.ignored.add(root);
            continue;
          }
          push(out.fields, root, s);
          push(out.fields, `${root}.${key}`, s);
        }
      }
    }
  }
}

/** Parses a document as the index's mapping dictates; throws the real per-document errors. */
export function parseDocument(mappings: Obj, settings: Obj, id: string, source: Obj, json: string): ParsedDoc {
  const run = (root: Obj, mutable: boolean): DocParser => {
    const p = new DocParser(root, settings, id, json, mutable);
    p.object(source, root, '', root.dynamic === undefined ? 'true' : String(root.dynamic), p.doc);
    return p;
  };
  try {
    const p = run(mappings, false);
    return { doc: p.doc, ignored: [...p.ignored] };
  } catch (err) {
    if (err !== NEEDS_DYNAMIC) throw err;
  }
  const updated = clone(mappings);
  const p = run(updated, true);
  const limit = Number(indexSetting(settings, 'mapping.total_fields.limit') ?? 1000);
  const before = countFields(mappings);
  const after = countFields(updated);
  if (after > limit) {
    const why = `Limit of total fields [${limit}] has been exceeded while adding new fields [${after - before}]`;
    fail(400, 'document_parsing_exception', `[1:1] failed to parse: ${why}`, {
      caused_by: { type: 'illegal_argument_exception', reason: why },
    });
  }
  return { doc: p.doc, ignored: [...p.ignored], mappings: updated };
}
