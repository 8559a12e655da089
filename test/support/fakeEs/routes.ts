/** REST endpoints of the fake: method + path → cluster operation → `{statusCode, body}`. */
import { Cluster, type IndexState, type WriteOp } from './cluster.js';
import { validatePolicy } from './ilm.js';
import { count, deleteByQuery, search, sourceOf, sourceOptions } from './search.js';
import { indexSetting } from './mapping.js';
import {
  EsError,
  errorBody,
  fail,
  globMatch,
  isObj,
  list,
  truthyParam,
  unsupported,
  validationFailed,
  type Cause,
  type Obj,
} from './util.js';

export interface RouteRequest {
  method: string;
  path: string;
  qs: Record<string, string>;
  body: unknown;
}

export interface RouteResponse {
  statusCode: number;
  body: unknown;
}

export type ItemFaultLookup = (id: string, index: string) => { status: number; type: string; reason: string } | undefined;

const ok = (body: unknown, statusCode = 200): RouteResponse => ({ statusCode, body });

export const VERSION = '8.19.0';

function info(): Obj {
  return {
    name: 'fake-node-0',
    cluster_name: 'fake-elasticsearch',
    cluster_uuid: 'ZmFrZS1lbGFzdGljc2VhcmNo',
    version: {
      number: VERSION,
      build_flavor: 'default',
      build_type: 'docker',
      build_hash: '0000000000000000000000000000000000000000',
      build_date: '2025-01-01T00:00:00.000Z',
      build_snapshot: false,
      lucene_version: '9.12.1',
      minimum_wire_compatibility_version: '7.17.0',
      minimum_index_compatibility_version: '7.0.0',
    },
    tagline: 'You Know, for Search',
  };
}

function refreshMode(v: string | undefined): 'true' | 'wait_for' | undefined {
  if (v === '' || v === 'true') return 'true';
  if (v === 'wait_for') return 'wait_for';
  if (v === undefined || v === 'false') return undefined;
  return fail(400, 'illegal_argument_exception', `Unknown value for refresh: [${v}].`);
}

function num(v: unknown): number | undefined {
  return v === undefined || v === null || v === '' ? undefined : Number(v);
}

function noHandler(req: RouteRequest): never {
  fail(400, 'fake_unsupported_exception', `the fake Elasticsearch has no handler for [${req.method} ${req.path}]`);
}

export class Router {
  constructor(
    private readonly cluster: Cluster,
    private readonly itemFault: ItemFaultLookup,
  ) {}

  /** Disk use of the fake's one data node, in percent (`_cat/allocation`). */
  diskPercent = 40;

  route(req: RouteRequest): RouteResponse {
    const segs = req.path
      .split('/')
      .filter((s) => s !== '')
      .map((s) => {
        try {
          return decodeURIComponent(s);
        } catch {
          return s;
        }
      });
    const m = req.method;
    const { qs, body } = req;
    const [a, b, c] = segs;
    if (a === undefined) return m === 'GET' || m === 'HEAD' ? ok(m === 'HEAD' ? '' : info()) : noHandler(req);
    const is = (...methods: string[]): boolean => methods.includes(m);
    if (a.startsWith('_')) {
      switch (a) {
        case '_bulk':
          if (is('POST', 'PUT') && segs.length === 1) return this.bulk(undefined, body, qs);
          break;
        case '_search':
          if (is('GET', 'POST') && segs.length === 1) return ok(search(this.cluster, undefined, body, qs));
          break;
        case '_count':
          if (is('GET', 'POST') && segs.length === 1) return ok(count(this.cluster, undefined, body, qs));
          break;
        case '_mget':
          if (is('GET', 'POST') && segs.length === 1) return this.mget(undefined, body, qs);
          break;
        case '_refresh':
          if (is('GET', 'POST') && segs.length === 1) return this.refresh(undefined);
          break;
        case '_component_template':
        case '_index_template':
          return this.templates(a === '_index_template', b, req);
        case '_alias':
          if (is('GET', 'HEAD') && segs.length <= 2) return this.getAliases(undefined, b, m === 'HEAD');
          break;
        case '_aliases':
          if (is('POST') && segs.length === 1) return ok(this.cluster.updateAliases(body));
          if (is('GET') && segs.length === 1) return this.getAliases(undefined, undefined, false);
          break;
        case '_mapping':
          if (is('GET') && segs.length === 1) return this.describe(undefined, 'mappings');
          break;
        case '_settings':
          if (is('GET') && segs.length === 1) return this.describe(undefined, 'settings');
          break;
        case '_cluster':
          if (is('GET') && b === 'health') return ok(this.health());
          if (is('GET') && b === 'settings') return ok(this.clusterSettings());
          break;
        case '_cat':
          if (is('GET') && b === 'allocation') return ok(this.allocation());
          break;
        case '_ilm':
          if (b === 'policy' && segs.length <= 3) return this.policies(c, req);
          if (is('GET') && b === 'status' && segs.length === 2) return ok({ operation_mode: 'RUNNING' });
          break;
      }
      return noHandler(req);
    }
    if (segs.length === 1) {
      if (is('PUT')) {
        const idx = this.cluster.createIndex(a, body);
        return ok({ acknowledged: true, shards_acknowledged: true, index: idx.name });
      }
      if (is('HEAD')) {
        try {
          return ok('', this.cluster.resolve(a).length > 0 ? 200 : 404);
        } catch (err) {
          if (err instanceof EsError && err.status === 404) return ok('', 404);
          throw err;
        }
      }
      if (is('GET')) return this.describe(a, 'all');
      if (is('DELETE')) {
        this.cluster.deleteIndices(a);
        return ok({ acknowledged: true });
      }
      return noHandler(req);
    }
    const rest = segs.slice(2).join('/');
    switch (b) {
      case '_bulk':
        if (is('POST', 'PUT') && segs.length === 2) return this.bulk(a, body, qs);
        break;
      case '_search':
        if (is('GET', 'POST') && segs.length === 2) return ok(search(this.cluster, a, body, qs));
        break;
      case '_count':
        if (is('GET', 'POST') && segs.length === 2) return ok(count(this.cluster, a, body, qs));
        break;
      case '_mget':
        if (is('GET', 'POST') && segs.length === 2) return this.mget(a, body, qs);
        break;
      case '_stats':
        if (is('GET') && segs.length <= 3) return ok(this.stats(a));
        break;
      case '_refresh':
        if (is('GET', 'POST') && segs.length === 2) return this.refresh(a);
        break;
      case '_delete_by_query':
        if (is('POST') && segs.length === 2) {
          const r = deleteByQuery(this.cluster, a, body, qs);
          return ok(r.body, r.status);
        }
        break;
      case '_mapping':
        if (is('PUT', 'POST') && segs.length === 2) return ok(this.cluster.putMapping(a, body));
        if (is('GET') && segs.length === 2) return this.describe(a, 'mappings');
        break;
      case '_settings':
        if (is('GET') && segs.length === 2) return this.describe(a, 'settings');
        if (is('PUT') && segs.length === 2) return ok(this.cluster.putSettings(a, body));
        break;
      case '_alias':
      case '_aliases':
        if (is('GET', 'HEAD')) return this.getAliases(a, c, m === 'HEAD');
        if (is('PUT', 'POST') && c)
          return ok(this.cluster.updateAliases({ actions: [{ add: { ...(isObj(body) ? body : {}), index: a, alias: c } }] }));
        if (is('DELETE') && c) return ok(this.cluster.updateAliases({ actions: [{ remove: { index: a, alias: c } }] }));
        break;
      case '_doc':
        if (rest === '' && is('POST')) return this.docWrite('index', a, undefined, body, qs);
        if (rest === '') break;
        if (is('GET', 'HEAD')) return this.getDoc(a, rest, qs, m === 'HEAD', false);
        if (is('PUT', 'POST')) return this.docWrite('index', a, rest, body, qs);
        if (is('DELETE')) return this.docWrite('delete', a, rest, undefined, qs);
        break;
      case '_create':
        if (rest !== '' && is('PUT', 'POST')) return this.docWrite('create', a, rest, body, qs);
        break;
      case '_update':
        if (rest !== '' && is('POST')) return this.docWrite('update', a, rest, body, qs);
        break;
      case '_source':
        if (rest !== '' && is('GET', 'HEAD')) return this.getDoc(a, rest, qs, m === 'HEAD', true);
        break;
    }
    return noHandler(req);
  }

  // ---- documents -----------------------------------------------------------------------------

  private bulk(pathIndex: string | undefined, body: unknown, qs: Record<string, string>): RouteResponse {
    const started = Date.now();
    if (!Array.isArray(body)) fail(400, 'parse_exception', 'request body is required');
    if (qs.pipeline !== undefined) unsupported('ingest pipelines');
    const ops: WriteOp[] = [];
    const known = [
      '_index',
      '_id',
      'routing',
      'version',
      'version_type',
      'if_seq_no',
      'if_primary_term',
      'retry_on_conflict',
      'pipeline',
      'require_alias',
      'require_data_stream',
      'dynamic_templates',
      '_source',
      'list_executed_pipelines',
    ];
    for (let i = 0; i < body.length; i++) {
      const line = i + 1;
      const action: unknown = body[i];
      if (!isObj(action) || Object.keys(action).length !== 1) {
        fail(
          400,
          'illegal_argument_exception',
          `Malformed action/metadata line [${line}], expected a simple value for field [action] but found an object with ${isObj(action) ? Object.keys(action).length : 0} keys`,
        );
      }
      const [kind, meta] = Object.entries(action)[0] as [string, unknown];
      if (!['index', 'create', 'update', 'delete'].includes(kind)) {
        fail(
          400,
          'illegal_argument_exception',
          `Malformed action/metadata line [${line}], expected one of [create, delete, index, update] but found [${kind}]`,
        );
      }
      if (!isObj(meta))
        fail(400, 'illegal_argument_exception', `Malformed action/metadata line [${line}], expected START_OBJECT but found [VALUE_STRING]`);
      for (const k of Object.keys(meta))
        if (!known.includes(k))
          fail(400, 'illegal_argument_exception', `Action/metadata line [${line}] contains an unknown parameter [${k}]`);
      if (meta.routing !== undefined || meta.pipeline !== undefined || meta.dynamic_templates !== undefined)
        unsupported('routing, pipelines and dynamic templates in bulk actions');
      let doc: unknown;
      if (kind !== 'delete') {
        if (i + 1 >= body.length) validationFailed([`${kind} request is missing its source on line [${line + 1}]`]);
        doc = body[++i];
      }
      const requireAlias = meta.require_alias ?? (qs.require_alias !== undefined ? truthyParam(qs.require_alias) : undefined);
      ops.push({
        op: kind as WriteOp['op'],
        index: meta._index === undefined ? pathIndex : String(meta._index),
        id: meta._id === undefined || meta._id === null ? undefined : String(meta._id),
        version: num(meta.version),
        versionType: meta.version_type === undefined ? undefined : String(meta.version_type),
        ifSeqNo: num(meta.if_seq_no),
        ifPrimaryTerm: num(meta.if_primary_term),
        requireAlias: requireAlias === true || requireAlias === 'true',
        doc,
      });
    }
    if (ops.length === 0) validationFailed(['no requests added']);
    const errs = ops.flatMap((op) => Cluster.validate(op));
    if (errs.length > 0) validationFailed(errs);
    const refresh = refreshMode(qs.refresh);
    const touched = new Set<IndexState>();
    const items = ops.map((op) => {
      const fault = this.itemFault(op.id ?? '', op.index as string);
      if (fault) {
        const error: Cause = { type: fault.type, reason: fault.reason, index_uuid: '_na_', index: op.index };
        return { [op.op]: { _index: op.index, _id: op.id ?? null, status: fault.status, error } };
      }
      const r = this.cluster.write(op, refresh === 'true');
      if (r.index) touched.add(r.index);
      return { [op.op]: r.item };
    });
    if (refresh) touched.forEach((i) => this.cluster.refresh(i));
    const errors = items.some((it) => 'error' in (Object.values(it)[0] as Obj));
    return ok({ errors, took: Date.now() - started, items });
  }

  private docWrite(op: WriteOp['op'], index: string, id: string | undefined, body: unknown, qs: Record<string, string>): RouteResponse {
    const w: WriteOp = {
      op: op === 'index' && qs.op_type === 'create' ? 'create' : op,
      index,
      id,
      version: num(qs.version),
      versionType: qs.version_type,
      ifSeqNo: num(qs.if_seq_no),
      ifPrimaryTerm: num(qs.if_primary_term),
      requireAlias: truthyParam(qs.require_alias),
      doc: body,
    };
    const errs = Cluster.validate(w);
    if (errs.length > 0) validationFailed(errs);
    const fault = this.itemFault(id ?? '', index);
    if (fault) return ok(errorBody(fault.status, { type: fault.type, reason: fault.reason }), fault.status);
    const refresh = refreshMode(qs.refresh);
    const r = this.cluster.write(w, refresh === 'true');
    if (refresh && r.index) this.cluster.refresh(r.index);
    const { status: _status, ...item } = r.item;
    if (isObj(item.error)) return ok(errorBody(r.status, item.error as Cause), r.status);
    return ok(item, r.status);
  }

  private getDoc(index: string, id: string, qs: Record<string, string>, head: boolean, sourceOnly: boolean): RouteResponse {
    const idx = this.cluster.resolveSingle(index);
    const rec = (qs.realtime === 'false' ? idx.visible : idx.live).get(id);
    if (!rec) {
      if (head) return ok('', 404);
      if (sourceOnly) fail(404, 'resource_not_found_exception', `Document not found [${idx.name}]/[${id}]`);
      return ok({ _index: idx.name, _id: id, found: false }, 404);
    }
    if (head) return ok('');
    const src = sourceOptions(undefined, qs);
    if (sourceOnly) return ok(sourceOf(rec, src));
    return ok({
      _index: idx.name,
      _id: id,
      _version: rec.version,
      _seq_no: rec.seqNo,
      _primary_term: 1,
      ...(rec.ignored.length > 0 ? { _ignored: [...rec.ignored] } : {}),
      found: true,
      ...(src.enabled ? { _source: sourceOf(rec, src) } : {}),
    });
  }

  private mget(pathIndex: string | undefined, body: unknown, qs: Record<string, string>): RouteResponse {
    if (!isObj(body)) fail(400, 'parse_exception', 'request body is required');
    let specs: { index: string | undefined; id: string; source?: unknown }[];
    if (Array.isArray(body.ids)) specs = body.ids.map((id) => ({ index: pathIndex, id: String(id) }));
    else if (Array.isArray(body.docs)) {
      specs = body.docs.map((d) => {
        const o = isObj(d) ? d : {};
        return {
          index: o._index === undefined ? pathIndex : String(o._index),
          id: String(o._id),
          ...(o._source !== undefined ? { source: o._source } : {}),
        };
      });
    } else validationFailed(['no documents to get']);
    const missing = specs.flatMap((s, i) => (s.index === undefined ? [`index is missing for doc ${i}`] : []));
    if (specs.length === 0) validationFailed(['no documents to get']);
    if (missing.length > 0) validationFailed(missing);
    const docs = specs.map((s) => {
      let idx: IndexState;
      try {
        idx = this.cluster.resolveSingle(s.index as string);
      } catch (err) {
        if (!(err instanceof EsError)) throw err;
        const root: Obj = { ...err.esCause };
        delete root.caused_by;
        return { _index: s.index, _id: s.id, error: { root_cause: [root], ...err.esCause } };
      }
      const rec = (qs.realtime === 'false' ? idx.visible : idx.live).get(s.id);
      if (!rec) return { _index: idx.name, _id: s.id, found: false };
      const src = sourceOptions(s.source, qs);
      return {
        _index: idx.name,
        _id: s.id,
        _version: rec.version,
        _seq_no: rec.seqNo,
        _primary_term: 1,
        found: true,
        ...(src.enabled ? { _source: sourceOf(rec, src) } : {}),
      };
    });
    return ok({ docs });
  }

  // ---- indices, aliases, templates -----------------------------------------------------------

  private refresh(target: string | undefined): RouteResponse {
    const indices = this.cluster.resolve(target);
    indices.forEach((i) => this.cluster.refresh(i));
    return ok({ _shards: { total: indices.length * 2, successful: indices.length, failed: 0 } });
  }

  private describe(target: string | undefined, what: 'all' | 'mappings' | 'settings'): RouteResponse {
    const out: Obj = {};
    for (const idx of this.cluster.resolve(target)) {
      const settings = { index: { ...(idx.settings.index as Obj), uuid: idx.uuid, provided_name: idx.name } };
      if (what === 'mappings') out[idx.name] = { mappings: idx.mappings };
      else if (what === 'settings') out[idx.name] = { settings };
      else out[idx.name] = { aliases: Object.fromEntries(idx.aliases), mappings: idx.mappings, settings };
    }
    return ok(out);
  }

  private getAliases(indexExpr: string | undefined, nameExpr: string | undefined, head: boolean): RouteResponse {
    const names = list(nameExpr);
    const all = names.length === 0 || names.includes('_all') || names.includes('*');
    const out: Obj = {};
    const seen = new Set<string>();
    for (const idx of this.cluster.resolve(indexExpr)) {
      const aliases: Obj = {};
      for (const [alias, meta] of idx.aliases) {
        const hit = all ? alias : names.find((n) => globMatch(n, alias));
        if (hit === undefined) continue;
        seen.add(hit);
        aliases[alias] = meta;
      }
      if (Object.keys(aliases).length > 0 || all) out[idx.name] = { aliases };
    }
    const missing = all ? [] : names.filter((n) => !n.includes('*') && !seen.has(n));
    if (head) return ok('', missing.length === 0 && Object.keys(out).length > 0 ? 200 : 404);
    if (missing.length > 0) return ok({ error: `alias [${missing.join(',')}] missing`, status: 404, ...out }, 404);
    return ok(out);
  }

  private templates(composable: boolean, name: string | undefined, req: RouteRequest): RouteResponse {
    const store = composable ? this.cluster.indexTemplates : this.cluster.componentTemplates;
    const what = composable ? 'index template' : 'component template';
    const m = req.method;
    if ((m === 'PUT' || m === 'POST') && name) {
      if (truthyParam(req.qs.create) && store.has(name)) fail(400, 'illegal_argument_exception', `${what} [${name}] already exists`);
      return ok(composable ? this.cluster.putIndexTemplate(name, req.body) : this.cluster.putComponentTemplate(name, req.body));
    }
    if (m === 'GET' || m === 'HEAD') {
      const pattern = name ?? '*';
      const found = [...store.entries()].filter(([n]) => list(pattern).some((p) => globMatch(p, n))).sort(([x], [y]) => (x < y ? -1 : 1));
      if (m === 'HEAD') return ok('', found.length > 0 ? 200 : 404);
      if (found.length === 0 && !pattern.includes('*'))
        fail(404, 'resource_not_found_exception', `${what} matching [${pattern}] not found`);
      const key = composable ? 'index_template' : 'component_template';
      const items = found.map(([n, t]) => ({ name: n, [key]: composable ? { ...t, composed_of: t.composed_of ?? [] } : t }));
      return ok(composable ? { index_templates: items } : { component_templates: items });
    }
    if (m === 'DELETE' && name) {
      if (!store.has(name)) fail(404, 'resource_not_found_exception', composable ? `index_template [${name}] missing` : name);
      if (!composable) {
        const users = [...this.cluster.indexTemplates.entries()].filter(([, t]) => list(t.composed_of).includes(name)).map(([n]) => n);
        if (users.length > 0) {
          fail(
            400,
            'illegal_argument_exception',
            `component templates [${name}] cannot be removed as they are still in use by index templates [${users.join(', ')}]`,
          );
        }
      }
      store.delete(name);
      return ok({ acknowledged: true });
    }
    return noHandler(req);
  }

  /** `_ilm/policy[/<name>]`: PUT validates and stores (the version counts up), GET lists, DELETE refuses a policy in use. */
  private policies(name: string | undefined, req: RouteRequest): RouteResponse {
    const store = this.cluster.policies;
    const inUse = (n: string): string[] =>
      [...this.cluster.indices.values()].filter((i) => indexSetting(i.settings, 'lifecycle.name') === n).map((i) => i.name);
    if (req.method === 'PUT' && name) {
      const policy = validatePolicy(name, req.body);
      store.set(name, { version: (store.get(name)?.version ?? 0) + 1, modified: new Date().toISOString(), policy });
      return ok({ acknowledged: true });
    }
    if (req.method === 'GET') {
      const names = list(name);
      const found = [...store.keys()].filter((n) => names.length === 0 || names.some((p) => globMatch(p, n))).sort();
      const missing = names.filter((n) => !n.includes('*') && !store.has(n));
      if (missing.length > 0) fail(404, 'resource_not_found_exception', `Lifecycle policy not found: [${missing.join(', ')}]`);
      return ok(
        Object.fromEntries(
          found.map((n) => {
            const p = store.get(n) as { version: number; modified: string; policy: Obj };
            return [n, { version: p.version, modified_date: p.modified, policy: p.policy, in_use_by: { indices: inUse(n), data_streams: [], composable_templates: [] } }]; // prettier-ignore
          }),
        ),
      );
    }
    if (req.method === 'DELETE' && name) {
      if (!store.has(name)) fail(404, 'resource_not_found_exception', `Lifecycle policy not found: ${name}`);
      const users = inUse(name);
      if (users.length > 0)
        fail(
          400,
          'illegal_argument_exception',
          `Cannot delete policy [${name}]. It is in use by one or more indices: [${users.join(', ')}]`,
        );
      store.delete(name);
      return ok({ acknowledged: true });
    }
    return noHandler(req);
  }

  /** Elasticsearch's default disk watermarks, as `_cluster/settings?include_defaults&flat_settings` gives them. */
  private clusterSettings(): Obj {
    return {
      persistent: {},
      transient: {},
      defaults: {
        'cluster.routing.allocation.disk.watermark.low': '85%',
        'cluster.routing.allocation.disk.watermark.high': '90%',
        'cluster.routing.allocation.disk.watermark.flood_stage': '95%',
      },
    };
  }

  /** Store size the fake reports for an index, in bytes, instead of its documents' JSON (fake.setStoreBytes). */
  readonly storeBytes = new Map<string, number>();

  /** `<target>/_stats[/store]`: each index's primaries and total store size (its documents' JSON unless set). */
  private stats(target: string): Obj {
    const indices: Obj = {};
    for (const idx of this.cluster.resolve(target, { allowNoIndices: true })) {
      let bytes = this.storeBytes.get(idx.name);
      if (bytes === undefined) {
        bytes = 0;
        for (const r of idx.live.values()) bytes += Buffer.byteLength(JSON.stringify(r.source));
      }
      const store = { store: { size_in_bytes: bytes }, docs: { count: idx.live.size } };
      indices[idx.name] = { uuid: idx.uuid, primaries: store, total: store };
    }
    return { _shards: { total: 0, successful: 0, failed: 0 }, indices };
  }

  /** `_cat/allocation?format=json` for the one data node. */
  private allocation(): Obj[] {
    const total = 100 * 1024 ** 3;
    const used = Math.round((total * this.diskPercent) / 100);
    const shards = [...this.cluster.indices.values()].length;
    return [
      {
        shards: String(shards),
        'disk.indices': '1mb',
        'disk.used': `${Math.round(used / 1024 ** 3)}gb`,
        'disk.avail': `${Math.round((total - used) / 1024 ** 3)}gb`,
        'disk.total': '100gb',
        'disk.percent': String(this.diskPercent),
        host: '127.0.0.1',
        ip: '127.0.0.1',
        node: 'fake-node',
      },
    ];
  }

  private health(): Obj {
    const n = this.cluster.indices.size;
    return {
      cluster_name: 'fake-elasticsearch',
      status: 'green',
      timed_out: false,
      number_of_nodes: 1,
      number_of_data_nodes: 1,
      active_primary_shards: n,
      active_shards: n,
      relocating_shards: 0,
      initializing_shards: 0,
      unassigned_shards: 0,
      delayed_unassigned_shards: 0,
      number_of_pending_tasks: 0,
      number_of_in_flight_fetch: 0,
      task_max_waiting_in_queue_millis: 0,
      active_shards_percent_as_number: 100,
    };
  }
}
