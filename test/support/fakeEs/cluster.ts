/**
 * Cluster state of the fake: templates, indices (settings, mappings, aliases, documents) and the
 * document write semantics (auto-creation, aliases, require_alias, versioning, updates).
 */
import {
  buildDefs,
  composeMappings,
  indexSetting,
  mergeMappingUpdate,
  normalizeMappings,
  normalizeSettings,
  normalizers,
  validateMappings,
} from './mapping.js';
import { parseDocument } from './document.js';
import { deleteAt, originationFromName, type StoredPolicy } from './ilm.js';
import type { FieldDef, IndexedDoc } from './mapping.js';
import {
  EsError,
  clone,
  deepEqual,
  deepMerge,
  fail,
  globMatch,
  globsIntersect,
  indexNotFound,
  indexNotFoundCause,
  isObj,
  list,
  randomId,
  unsupported,
  validationFailed,
  type Obj,
} from './util.js';

export interface DocRecord {
  id: string;
  source: Obj;
  version: number;
  seqNo: number;
  indexed: IndexedDoc;
  /** Fields whose value was skipped (ignore_above, ignore_malformed): the hit's `_ignored`. */
  ignored: string[];
}

/** `index.gc_deletes`' default: how long a delete's tombstone refuses older versions. */
const GC_DELETES_MS = 60_000;

export interface IndexState {
  name: string;
  uuid: string;
  settings: Obj;
  mappings: Obj;
  defs: Map<string, FieldDef>;
  aliases: Map<string, Obj>;
  /** Realtime view (GET, mget, writes). */
  live: Map<string, DocRecord>;
  /**
   * Deleted ids with the version of their delete and when: a real node checks versioned writes
   * against them for `index.gc_deletes` (60 s), so an older external version stays refused.
   */
  tombstones?: Map<string, { version: number; atMs: number }>;
  /** What searches see: `live` as of the last refresh. */
  visible: Map<string, DocRecord>;
  dirty: boolean;
  seqNo: number;
  /** Creation time (ms), the lifecycle's origination date unless the name gives one. */
  createdAt: number;
}

export interface WriteOp {
  op: 'index' | 'create' | 'update' | 'delete';
  index: string | undefined;
  id: string | undefined;
  version?: number;
  versionType?: string;
  ifSeqNo?: number;
  ifPrimaryTerm?: number;
  requireAlias?: boolean;
  /** Source of index/create; `{doc, upsert, doc_as_upsert, detect_noop}` of update. */
  doc?: unknown;
}

export interface WriteOutcome {
  status: number;
  /** The bulk item (with `status`); single-document APIs drop `status`. */
  item: Obj;
  index?: IndexState;
}

const MAX_ID_BYTES = 512;

function validateIndexName(name: string): void {
  const bad = (why: string): never =>
    fail(400, 'invalid_index_name_exception', `Invalid index name [${name}], ${why}`, { index_uuid: '_na_', index: name });
  if (name === '') bad('must not be empty');
  if (name !== name.toLowerCase()) bad('must be lowercase');
  if (/[\\/*?"<>| ,#]/.test(name)) bad('must not contain the following characters [ , ", *, \\, <, |, ,, >, /, ?]');
  if (name.includes(':')) bad("must not contain ':'");
  if (/^[-_+]/.test(name)) bad("must not start with '_', '-', or '+'");
  if (name === '.' || name === '..') bad("must not be '.' or '..'");
  if (Buffer.byteLength(name) > 255) bad(`index name is too long, (${Buffer.byteLength(name)} > 255)`);
}

function patternsOf(t: Obj): string[] {
  return list(t.index_patterns);
}

export class Cluster {
  readonly componentTemplates = new Map<string, Obj>();
  readonly indexTemplates = new Map<string, Obj>();
  readonly indices = new Map<string, IndexState>();
  readonly policies = new Map<string, StoredPolicy>();

  // ---- templates -----------------------------------------------------------------------------

  putComponentTemplate(name: string, body: unknown): Obj {
    if (!isObj(body)) fail(400, 'parse_exception', 'request body is required');
    for (const k of Object.keys(body)) {
      if (!['template', 'version', '_meta', 'deprecated'].includes(k))
        fail(400, 'x_content_parse_exception', `[1:2] [component_template] unknown field [${k}]`);
    }
    if (!isObj(body.template)) fail(400, 'x_content_parse_exception', '[1:2] Required [template]');
    const t = body.template;
    const settings = normalizeSettings(t.settings);
    normalizers(settings);
    // as a real cluster does, a component template is valid on its own: its mappings may use only
    // the normalizers its own settings define (elastic/elasticsearch#54023)
    validateMappings(normalizeMappings(t.mappings), settings);
    this.componentTemplates.set(name, clone(body));
    return { acknowledged: true };
  }

  putIndexTemplate(name: string, body: unknown): Obj {
    if (!isObj(body)) fail(400, 'parse_exception', 'request body is required');
    const known = [
      'index_patterns',
      'composed_of',
      'template',
      'priority',
      'version',
      '_meta',
      'data_stream',
      'allow_auto_create',
      'ignore_missing_component_templates',
      'deprecated',
    ];
    for (const k of Object.keys(body))
      if (!known.includes(k)) fail(400, 'x_content_parse_exception', `[1:2] [index_template] unknown field [${k}]`);
    const patterns = patternsOf(body);
    if (patterns.length === 0) validationFailed(['index patterns are missing']);
    if (body.data_stream !== undefined) unsupported('data streams');
    const ignoreMissing = list(body.ignore_missing_component_templates);
    const missing = list(body.composed_of).filter((c) => !this.componentTemplates.has(c) && !ignoreMissing.includes(c));
    if (missing.length > 0) {
      fail(
        400,
        'invalid_index_template_exception',
        `index_template [${name}] invalid, cause [index template [${name}] specifies component templates [${missing.join(', ')}] that do not exist]`,
      );
    }
    const priority = Number(body.priority ?? 0);
    for (const [other, t] of this.indexTemplates) {
      if (other === name || Number(t.priority ?? 0) !== priority) continue;
      const theirs = patternsOf(t);
      if (patterns.some((p) => theirs.some((q) => globsIntersect(p, q)))) {
        fail(
          400,
          'illegal_argument_exception',
          `index template [${name}] has index patterns [${patterns.join(', ')}] matching patterns from existing templates [${other}] with patterns (${other} => [${theirs.join(', ')}]) that have the same priority [${priority}], multiple index templates may not match during index creation, please use a different priority`,
        );
      }
    }
    const { settings, mappings } = this.compose(body, {});
    normalizers(settings);
    validateMappings(mappings, settings);
    this.indexTemplates.set(name, clone(body));
    return { acknowledged: true };
  }

  /** Settings, mappings and aliases of an index created from `template` plus the request's own. */
  private compose(template: Obj | undefined, request: Obj): { settings: Obj; mappings: Obj; aliases: Obj } {
    let settings: Obj = { index: {} };
    let mappings: Obj = {};
    let aliases: Obj = {};
    const add = (t: unknown): void => {
      if (!isObj(t)) return;
      settings = deepMerge(settings, normalizeSettings(t.settings));
      mappings = composeMappings(mappings, normalizeMappings(t.mappings));
      if (isObj(t.aliases)) aliases = { ...aliases, ...clone(t.aliases) };
    };
    if (template) {
      for (const c of list(template.composed_of)) add(this.componentTemplates.get(c)?.template);
      add(template.template);
    }
    add(request);
    return { settings, mappings, aliases };
  }

  private templateFor(name: string): Obj | undefined {
    let best: Obj | undefined;
    for (const t of this.indexTemplates.values()) {
      if (!patternsOf(t).some((p) => globMatch(p, name))) continue;
      if (!best || Number(t.priority ?? 0) > Number(best.priority ?? 0)) best = t;
    }
    return best;
  }

  // ---- indices and aliases -------------------------------------------------------------------

  aliasIndices(alias: string): IndexState[] {
    return [...this.indices.values()].filter((i) => i.aliases.has(alias)).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  aliasNames(): string[] {
    return [...new Set([...this.indices.values()].flatMap((i) => [...i.aliases.keys()]))].sort();
  }

  createIndex(name: string, body: unknown): IndexState {
    validateIndexName(name);
    const existing = this.indices.get(name);
    if (existing) {
      fail(400, 'resource_already_exists_exception', `index [${name}/${existing.uuid}] already exists`, {
        index_uuid: existing.uuid,
        index: name,
      });
    }
    if (this.aliasIndices(name).length > 0) {
      fail(400, 'invalid_index_name_exception', `Invalid index name [${name}], already exists as alias`, {
        index_uuid: '_na_',
        index: name,
      });
    }
    const req = body === undefined || body === null ? {} : body;
    if (!isObj(req)) fail(400, 'parse_exception', 'Failed to derive xcontent');
    for (const k of Object.keys(req))
      if (!['settings', 'mappings', 'aliases'].includes(k)) fail(400, 'parse_exception', `unknown key [${k}] for create index`);
    const { settings, mappings, aliases } = this.compose(this.templateFor(name), req);
    normalizers(settings);
    validateMappings(mappings, settings);
    // parse_origination_date refuses, at creation, a name without its date
    originationFromName(name, settings);
    const aliasMap = new Map<string, Obj>();
    for (const [a, meta] of Object.entries(aliases)) {
      if (a === name) fail(400, 'invalid_alias_name_exception', `Invalid alias name [${a}]: index and alias names need to be unique`);
      if (this.indices.has(a))
        fail(
          400,
          'invalid_alias_name_exception',
          `Invalid alias name [${a}]: an index or data stream exists with the same name as the alias`,
        );
      const m = isObj(meta) ? clone(meta) : {};
      if (m.filter !== undefined || m.routing !== undefined) unsupported('alias filters and routing');
      const writers = this.aliasIndices(a).filter((i) => i.aliases.get(a)?.is_write_index === true);
      if (m.is_write_index === true && writers.length > 0) {
        fail(
          400,
          'illegal_state_exception',
          `alias [${a}] has more than one write index [${[...writers.map((w) => w.name), name].join(',')}]`,
        );
      }
      aliasMap.set(a, m);
    }
    const idx: IndexState = {
      name,
      uuid: randomId(22),
      settings,
      mappings,
      defs: buildDefs(mappings, settings),
      aliases: aliasMap,
      live: new Map(),
      visible: new Map(),
      dirty: false,
      seqNo: 0,
      createdAt: Date.now(),
    };
    this.indices.set(name, idx);
    return idx;
  }

  deleteIndices(expr: string): void {
    const names = list(expr);
    for (const n of names) {
      if (n.includes('*') || n === '_all') fail(400, 'illegal_argument_exception', 'Wildcard expressions or all indices are not allowed');
      if (!this.indices.has(n)) {
        if (this.aliasIndices(n).length > 0) {
          fail(
            400,
            'illegal_argument_exception',
            `The provided expression [${n}] matches an alias, specify the corresponding concrete indices instead.`,
          );
        }
        indexNotFound(n);
      }
    }
    for (const n of names) this.indices.delete(n);
  }

  /** Concrete indices of a target expression (`a,b`, wildcards, aliases, `_all`), sorted by name. */
  resolve(expr: string | undefined, o: { ignoreUnavailable?: boolean; allowNoIndices?: boolean } = {}): IndexState[] {
    const names = list(expr);
    const out = new Set<IndexState>();
    const all = [...this.indices.values()];
    for (const n of names.length === 0 ? ['_all'] : names) {
      if (n === '_all' || n === '*') all.forEach((i) => out.add(i));
      else if (n.startsWith('-') && out.size > 0) {
        for (const i of [...out]) if (globMatch(n.slice(1), i.name)) out.delete(i);
      } else if (n.includes('*')) {
        for (const i of all) if (globMatch(n, i.name) || [...i.aliases.keys()].some((a) => globMatch(n, a))) out.add(i);
      } else {
        const idx = this.indices.get(n);
        const via = idx ? [idx] : this.aliasIndices(n);
        if (via.length === 0 && !o.ignoreUnavailable) indexNotFound(n);
        via.forEach((i) => out.add(i));
      }
    }
    if (out.size === 0 && o.allowNoIndices === false) indexNotFound(expr ?? '_all');
    return [...out].sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** The one index a single-document read goes to (an alias over several indices is refused). */
  resolveSingle(name: string): IndexState {
    const idx = this.indices.get(name);
    if (idx) return idx;
    const via = this.aliasIndices(name);
    if (via.length === 0) indexNotFound(name);
    if (via.length > 1) {
      fail(
        400,
        'illegal_argument_exception',
        `alias [${name}] has more than one index associated with it [${via.map((i) => i.name).join(', ')}], can't execute a single index op`,
      );
    }
    return via[0] as IndexState;
  }

  private writeTarget(name: string, requireAlias: boolean, op: WriteOp['op'], external: boolean): IndexState {
    const via = this.aliasIndices(name);
    if (via.length > 0) {
      const writers = via.filter((i) => i.aliases.get(name)?.is_write_index === true);
      if (writers.length === 1) return writers[0] as IndexState;
      const only = via[0] as IndexState;
      if (via.length === 1 && only.aliases.get(name)?.is_write_index !== false) return only;
      fail(
        400,
        'illegal_argument_exception',
        `no write index is defined for alias [${name}]. The write index may be explicitly disabled using is_write_index=false or the alias points to multiple indices without one being designated as a write index`,
      );
    }
    if (requireAlias) {
      throw new EsError(
        404,
        indexNotFoundCause(name, `no such index [${name}] and [require_alias] request flag is [true] and [${name}] is not an alias`),
      );
    }
    const idx = this.indices.get(name);
    if (idx) return idx;
    if (op === 'delete' && !external) indexNotFound(name); // only externally versioned deletes auto-create
    return this.createIndex(name, {});
  }

  updateAliases(body: unknown): Obj {
    const actions = isObj(body) && Array.isArray(body.actions) ? body.actions : [];
    if (actions.length === 0) validationFailed(['Must specify at least one alias action']);
    const staged = new Map<IndexState, Map<string, Obj>>();
    const stage = (i: IndexState): Map<string, Obj> => {
      let m = staged.get(i);
      if (!m) staged.set(i, (m = new Map(i.aliases)));
      return m;
    };
    const removed = new Set<string>();
    const touched = new Set<string>();
    for (const action of actions) {
      const [kind, spec] = isObj(action) ? (Object.entries(action)[0] ?? []) : [];
      if (!isObj(spec)) fail(400, 'x_content_parse_exception', `[1:2] [alias_action] unknown field [${String(kind)}]`);
      const targets = this.resolve([...list(spec.index), ...list(spec.indices)].join(','));
      const aliases = [...list(spec.alias), ...list(spec.aliases)];
      if (kind === 'add') {
        if (spec.filter !== undefined || spec.routing !== undefined || spec.index_routing !== undefined)
          unsupported('alias filters and routing');
        for (const a of aliases) {
          if (this.indices.has(a))
            fail(
              400,
              'invalid_alias_name_exception',
              `Invalid alias name [${a}]: an index or data stream exists with the same name as the alias`,
            );
          const meta: Obj = {};
          if (spec.is_write_index !== undefined) meta.is_write_index = spec.is_write_index;
          if (spec.is_hidden !== undefined) meta.is_hidden = spec.is_hidden;
          for (const t of targets) stage(t).set(a, meta);
          touched.add(a);
        }
      } else if (kind === 'remove') {
        for (const a of aliases) {
          const hits = targets.filter((t) => stage(t).has(a));
          if (hits.length === 0 && spec.must_exist !== false)
            fail(404, 'aliases_not_found_exception', `aliases [${a}] missing`, { 'resource.type': 'aliases', 'resource.id': a });
          for (const t of hits) stage(t).delete(a);
        }
      } else if (kind === 'remove_index') {
        for (const t of targets) removed.add(t.name);
      } else fail(400, 'x_content_parse_exception', `[1:2] [alias_action] unknown field [${String(kind)}]`);
    }
    for (const a of touched) {
      const writers = [...this.indices.values()].filter(
        (i) => !removed.has(i.name) && (staged.get(i) ?? i.aliases).get(a)?.is_write_index === true,
      );
      if (writers.length > 1)
        fail(400, 'illegal_state_exception', `alias [${a}] has more than one write index [${writers.map((w) => w.name).join(',')}]`);
    }
    for (const [i, m] of staged) i.aliases = m;
    for (const n of removed) this.indices.delete(n);
    return { acknowledged: true, errors: false };
  }

  /** `PUT <target>/_settings`: dynamic settings only (a `null` resets one); static ones are refused as on open indices. */
  putSettings(expr: string, body: unknown): Obj {
    if (!isObj(body)) fail(400, 'parse_exception', 'request body is required');
    const update = (normalizeSettings(isObj(body.settings) ? body.settings : body).index ?? {}) as Obj;
    const flat = (o: Obj, prefix = ''): [string, unknown][] =>
      Object.entries(o).flatMap(([k, v]) => (isObj(v) ? flat(v, `${prefix}${k}.`) : [[`${prefix}${k}`, v] as [string, unknown]]));
    const entries = flat(update);
    const targets = this.resolve(expr);
    const fixed = entries.map(([k]) => k).filter((k) => /^(number_of_shards|analysis\.|codec$|routing_partition_size$)/.test(k));
    if (fixed.length > 0) {
      fail(
        400,
        'illegal_argument_exception',
        `Can't update non dynamic settings [[${fixed.map((k) => `index.${k}`).join(', ')}]] for open indices [${targets.map((t) => `[${t.name}/${t.uuid}]`).join(', ')}]`,
      );
    }
    const apply = (settings: Obj): Obj => {
      for (const [key, value] of entries) {
        const path = key.split('.');
        let at = (settings.index ??= {}) as Obj;
        for (const p of path.slice(0, -1)) at = (isObj(at[p]) ? at[p] : (at[p] = {})) as Obj;
        const leaf = path[path.length - 1] as string;
        if (value === null || value === 'null') delete at[leaf];
        else at[leaf] = value;
      }
      return settings;
    };
    // a name that cannot give the origination date is refused before anything changes
    for (const idx of targets) originationFromName(idx.name, apply(clone(idx.settings)));
    for (const idx of targets) apply(idx.settings);
    return { acknowledged: true };
  }

  putMapping(expr: string, body: unknown): Obj {
    if (!isObj(body)) fail(400, 'parse_exception', 'request body is required');
    const update = normalizeMappings(body);
    const targets = this.resolve(expr);
    const merged = targets.map((idx) => {
      const m = mergeMappingUpdate(idx.mappings, update);
      validateMappings(m, idx.settings);
      return m;
    });
    targets.forEach((idx, k) => {
      idx.mappings = merged[k] as Obj;
      idx.defs = buildDefs(idx.mappings, idx.settings);
    });
    return { acknowledged: true };
  }

  /**
   * One pass of index lifecycle management at `nowMs`: every index whose policy's delete phase is
   * due (age from the origination date: the name's date, else the creation time) is deleted.
   * Returns the deleted names. Elasticsearch does this on its poll interval; the fake on demand.
   */
  runLifecycle(nowMs: number): string[] {
    const gone: string[] = [];
    for (const idx of [...this.indices.values()]) {
      const name = indexSetting(idx.settings, 'lifecycle.name');
      if (typeof name !== 'string' || name === '') continue;
      // the name's date as of now: a policy attached later parses it when its lifecycle starts
      const at = deleteAt(this.policies.get(name)?.policy, originationFromName(idx.name, idx.settings) ?? idx.createdAt);
      if (at !== undefined && nowMs >= at) gone.push(idx.name);
    }
    for (const n of gone) this.indices.delete(n);
    return gone.sort();
  }

  // ---- refresh -------------------------------------------------------------------------------

  refresh(idx: IndexState): void {
    if (!idx.dirty) return;
    idx.visible = new Map(idx.live);
    idx.dirty = false;
  }

  refreshAll(): void {
    for (const idx of this.indices.values()) this.refresh(idx);
  }

  /** The periodic refresh (skipped for indices with `refresh_interval: -1`). */
  autoRefresh(): void {
    for (const idx of this.indices.values()) if (String(indexSetting(idx.settings, 'refresh_interval')) !== '-1') this.refresh(idx);
  }

  // ---- document writes -----------------------------------------------------------------------

  /** Request-level validation of one write (a bulk request with any of these fails as a whole). */
  static validate(w: WriteOp): string[] {
    const errs: string[] = [];
    const vt = w.versionType ?? 'internal';
    if (!w.index) errs.push('index is missing');
    // only IndexRequest checks the length: update and delete accept longer ids
    if ((w.op === 'index' || w.op === 'create') && w.id !== undefined && Buffer.byteLength(w.id) > MAX_ID_BYTES) {
      errs.push(`id [${w.id}] is too long, must be no longer than ${MAX_ID_BYTES} bytes but was: ${Buffer.byteLength(w.id)}`);
    }
    if ((w.op === 'update' || w.op === 'delete') && (w.id === undefined || w.id === '')) errs.push('id is missing');
    if (!['internal', 'external', 'external_gte'].includes(vt)) errs.push(`version type [${vt}] is not supported`);
    if (vt === 'internal' && w.version !== undefined && w.op !== 'update') {
      errs.push(
        'internal versioning can not be used for optimistic concurrency control. Please use `if_seq_no` and `if_primary_term` instead',
      );
    }
    if (vt !== 'internal' && w.op !== 'update' && (w.version === undefined || !Number.isInteger(w.version) || w.version < 0)) {
      errs.push(`illegal version value [${w.version ?? -3}] for version type [${vt.toUpperCase()}]`);
    }
    if (w.op === 'create' && vt !== 'internal') errs.push('create operations only support internal versioning. use index instead');
    if (w.op === 'update' && (vt !== 'internal' || w.version !== undefined)) {
      errs.push('Update requests do not support versioning. Please use `if_seq_no` and `if_primary_term` instead');
    }
    if (w.op === 'update' && (!isObj(w.doc) || (w.doc.doc === undefined && w.doc.script === undefined && w.doc.upsert === undefined))) {
      errs.push('script or doc is missing');
    }
    if (w.op === 'update' && isObj(w.doc) && w.doc.script !== undefined) errs.push('scripted updates are not emulated by the fake');
    return errs;
  }

  write(w: WriteOp, forcedRefresh: boolean): WriteOutcome {
    let idx: IndexState | undefined;
    const id = w.id ?? randomId();
    try {
      idx = this.writeTarget(w.index as string, w.requireAlias === true, w.op, (w.versionType ?? 'internal') !== 'internal');
      const target = idx;
      const cur = target.live.get(id);
      const stone = cur ? undefined : target.tombstones?.get(id);
      const tomb = stone && Date.now() - stone.atMs < GC_DELETES_MS ? stone : undefined;
      const conflict = (why: string): never =>
        fail(409, 'version_conflict_engine_exception', `[${id}]: version conflict, ${why}`, {
          index_uuid: target.uuid,
          shard: '0',
          index: target.name,
        });
      if (w.ifSeqNo !== undefined || w.ifPrimaryTerm !== undefined) {
        const required = `required seqNo [${w.ifSeqNo}], primary term [${w.ifPrimaryTerm}]`;
        if (!cur) conflict(`${required}. but no document was found`);
        else if (cur.seqNo !== w.ifSeqNo || w.ifPrimaryTerm !== 1)
          conflict(`${required}. current document has seqNo [${cur.seqNo}] and primary term [1]`);
      }
      const vt = w.versionType ?? 'internal';
      const external = vt !== 'internal';
      const version = w.version ?? 0;
      const seen = cur?.version ?? tomb?.version;
      if (seen !== undefined && external) {
        if (vt === 'external' && seen >= version) conflict(`current version [${seen}] is higher or equal to the one provided [${version}]`);
        if (vt === 'external_gte' && seen > version) conflict(`current version [${seen}] is higher than the one provided [${version}]`);
      }
      const next = external ? version : (seen ?? 0) + 1;
      switch (w.op) {
        case 'create':
          if (cur) conflict(`document already exists (current version [${cur.version}])`);
          return this.store(target, id, w.doc, 1, 'created', forcedRefresh);
        case 'index':
          return this.store(target, id, w.doc, next, cur ? 'updated' : 'created', forcedRefresh);
        case 'update': {
          const body = w.doc as Obj;
          if (!cur) {
            if (body.upsert !== undefined) return this.store(target, id, body.upsert, 1, 'created', forcedRefresh);
            if (body.doc_as_upsert === true) return this.store(target, id, body.doc, 1, 'created', forcedRefresh);
            fail(404, 'document_missing_exception', `[${id}]: document missing`, {
              index_uuid: target.uuid,
              shard: '0',
              index: target.name,
            });
          }
          if (!isObj(body.doc)) fail(400, 'illegal_argument_exception', 'doc must be an object');
          const merged = deepMerge(cur.source, body.doc);
          if (body.detect_noop !== false && deepEqual(merged, cur.source)) {
            return {
              status: 200,
              index: target,
              item: {
                _index: target.name,
                _id: id,
                _version: cur.version,
                result: 'noop',
                _shards: { total: 0, successful: 0, failed: 0 },
                _seq_no: cur.seqNo,
                _primary_term: 1,
                status: 200,
              },
            };
          }
          return this.store(target, id, merged, cur.version + 1, 'updated', forcedRefresh);
        }
        case 'delete': {
          const seqNo = target.seqNo++;
          if (cur) {
            target.live.delete(id);
            target.dirty = true;
          }
          // a versioned delete of a missing document leaves its tombstone too
          (target.tombstones ??= new Map()).set(id, { version: next, atMs: Date.now() });
          const status = cur ? 200 : 404;
          const item = {
            _index: target.name,
            _id: id,
            _version: next,
            result: cur ? 'deleted' : 'not_found',
            _shards: this.shards(target),
            _seq_no: seqNo,
            _primary_term: 1,
          };
          return { status, index: target, item: { ...item, ...(forcedRefresh ? { forced_refresh: true } : {}), status } };
        }
      }
    } catch (err) {
      if (!(err instanceof EsError)) throw err;
      return { status: err.status, item: { _index: idx?.name ?? w.index, _id: w.id ?? null, status: err.status, error: err.esCause } };
    }
  }

  private shards(idx: IndexState): Obj {
    return { total: 1 + Number(indexSetting(idx.settings, 'number_of_replicas') ?? 1), successful: 1, failed: 0 };
  }

  private store(
    idx: IndexState,
    id: string,
    doc: unknown,
    version: number,
    result: 'created' | 'updated',
    forcedRefresh: boolean,
  ): WriteOutcome {
    if (!isObj(doc)) fail(400, 'document_parsing_exception', `[1:1] failed to parse: the document must be a JSON object`);
    const json = JSON.stringify(doc);
    const source = JSON.parse(json) as Obj;
    const parsed = parseDocument(idx.mappings, idx.settings, id, source, json);
    if (parsed.mappings) {
      idx.mappings = parsed.mappings;
      idx.defs = buildDefs(idx.mappings, idx.settings);
    }
    const rec: DocRecord = { id, source, version, seqNo: idx.seqNo++, indexed: parsed.doc, ignored: parsed.ignored };
    idx.live.delete(id); // a Lucene update appends: the document moves to the end of the index order
    idx.live.set(id, rec);
    idx.dirty = true;
    const status = result === 'created' ? 201 : 200;
    const item = { _index: idx.name, _id: id, _version: version, result, _shards: this.shards(idx), _seq_no: rec.seqNo, _primary_term: 1 };
    return { status, index: idx, item: { ...item, ...(forcedRefresh ? { forced_refresh: true } : {}), status } };
  }
}
