/**
 * In-memory Elasticsearch 8.x test double, faithful to what the sink relies on: composable
 * templates applied at index creation (settings, mappings, aliases), aliases and write indices,
 * lifecycle policies validated as 8.x validates them (and their delete phase applied on demand by
 * `runLifecycle`, ages from the date in an index's name), mapping-driven indexing
 * (dynamic:false, normalizers, ignore_above, ignore_malformed, type errors), bulk semantics with
 * external versioning and require_alias, searches that only see refreshed documents, sorting,
 * search_after, `_source` filtering and aggregations (terms, filters, cardinality, min, max, with
 * sub-aggregations). One request handler serves two transports: `mount()` on an
 * `@elastic/elasticsearch-mock` instance (in-process) and `listen()` (a real HTTP server for
 * subprocesses). Anything outside the emulated surface answers 400 `fake_unsupported_exception`,
 * so a gap never passes silently.
 *
 * It covers only the requests sandtrail sends (setup's templates, lifecycle policy, index, alias
 * and dynamic settings calls, index deletion, `_bulk` index/update/delete, get/mget (a single
 * document read through an alias over several indices refused, as in Elasticsearch), search with
 * bool/term/terms/ids/exists/range/prefix/match/nested/constant_score queries, sorts (fields and
 * `_score`), search_after, the aggregations above, count, delete_by_query with max_docs). It does
 * not emulate: approximate cardinality (it is always exact), scoring and full-text analysis (text
 * fields match on whole lowercase tokens only; bool queries sum their clauses' constant scores),
 * shards and replicas, rollover, ILM phases other than delete and any ILM timer, tombstones of
 * deleted documents (`index.gc_deletes`), scripts, the `flattened` type's depth limit, refresh
 * timing beyond a periodic refresh, security beyond injected 401s, or cluster-level limits
 * (thread pools, circuit breakers): those are exercised by the real-cluster run
 * (`ELASTICSEARCH_URL=... npx vitest run test/store/elasticsearch.test.ts`).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { Client, errors } from '@elastic/elasticsearch';
import MockModule from '@elastic/elasticsearch-mock';
import { Cluster } from './fakeEs/cluster.js';
import { Router } from './fakeEs/routes.js';
import { EsError, clone, errorBody, type Obj } from './fakeEs/util.js';

export interface RecordedRequest {
  method: string;
  /** Path without the query string, as sent (percent-encoded). */
  path: string;
  querystring: Record<string, string>;
  /** Parsed JSON object, array of parsed ndjson lines for _bulk/_msearch, or undefined. */
  body: unknown;
}

export interface FakeEsResponse {
  /** 0: the connection is dropped without a response (an injected 'connection' fault). */
  statusCode: number;
  body: unknown;
}

export interface FakeElasticsearchOptions {
  /** Period of the automatic refresh that makes writes searchable (default 100 ms; 0: only explicit refreshes). */
  refreshIntervalMs?: number;
}

export interface ItemError {
  status: number;
  type: string;
  reason: string;
}

export type RequestFailure = { status: number; body?: unknown } | 'connection';

interface ItemFault {
  match: (id: string, index: string) => boolean;
  error: ItemError;
  left: number;
}

interface RequestFault {
  method?: string;
  path?: RegExp;
  failure: RequestFailure;
  left: number;
}

type MockPattern = Parameters<MockInstance['add']>[0];
type MockClass = typeof MockModule.default;
type MockInstance = InstanceType<MockClass>;
// a CommonJS module whose typings declare `export default`: at run time the default import is the class
const Mock = ((MockModule as unknown as { default?: MockClass }).default ?? MockModule) as unknown as MockClass;

const DEFAULT_FAULTS: Record<number, [string, string]> = {
  401: ['security_exception', 'missing authentication credentials for REST request'],
  403: ['security_exception', 'action [indices:data/write/bulk] is unauthorized for user [fake]'],
  429: ['es_rejected_execution_exception', 'rejected execution of coordinating operation [coordinating_and_primary_bytes=0, replica_bytes=0, all_bytes=0, coordinating_operation_bytes=0, max_coordinating_and_primary_bytes=0]'],
  500: ['exception', 'injected internal failure'],
  502: ['exception', 'injected bad gateway'],
  503: ['cluster_block_exception', 'blocked by: [SERVICE_UNAVAILABLE/1/state not recovered / initialized];'],
  504: ['exception', 'injected gateway timeout'],
}; // prettier-ignore

function faultBody(status: number): unknown {
  if (status === 413) return ''; // Elasticsearch answers http.max_content_length overruns with an empty body
  const [type, reason] = DEFAULT_FAULTS[status] ?? ['exception', `injected HTTP ${status}`];
  return errorBody(status, { type, reason });
}

function parseBody(raw: unknown, path: string): unknown {
  let body = raw;
  if (body === undefined || body === null || body === '') return undefined;
  if (Buffer.isBuffer(body)) body = body.toString('utf8');
  if (typeof body !== 'string') return body;
  if (/\/_(bulk|msearch)$/.test(path)) {
    return body
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l, i) => {
        try {
          return JSON.parse(l) as unknown;
        } catch {
          throw new EsError(400, {
            type: 'illegal_argument_exception',
            reason: `Malformed action/metadata line [${i + 1}], expected START_OBJECT or END_OBJECT`,
          });
        }
      });
  }
  try {
    return JSON.parse(body) as unknown;
  } catch (err) {
    throw new EsError(400, { type: 'x_content_parse_exception', reason: `[1:1] ${(err as Error).message}` });
  }
}

export class FakeElasticsearch {
  /** Every request received, in order (faulted ones included). */
  readonly requests: RecordedRequest[] = [];
  private readonly cluster = new Cluster();
  private readonly router: Router;
  private readonly timer: ReturnType<typeof setInterval> | undefined;
  private server: Server | undefined;
  private url: string | undefined;
  private readonly itemFaults: ItemFault[] = [];
  private readonly requestFaults: RequestFault[] = [];

  constructor(o: FakeElasticsearchOptions = {}) {
    this.router = new Router(this.cluster, (id, index) => this.takeItemFault(id, index));
    const ms = o.refreshIntervalMs ?? 100;
    if (ms > 0) {
      this.timer = setInterval(() => this.cluster.autoRefresh(), ms);
      this.timer.unref();
    }
  }

  /** One REST request, whatever the transport. `statusCode` 0 means: drop the connection. */
  handle(req: { method: string; path: string; querystring?: Record<string, string> | string; body?: unknown }): FakeEsResponse {
    const method = req.method.toUpperCase();
    const q = req.path.indexOf('?');
    const path = q >= 0 ? req.path.slice(0, q) : req.path;
    const qs: Record<string, string> = q >= 0 ? Object.fromEntries(new URLSearchParams(req.path.slice(q + 1))) : {};
    if (typeof req.querystring === 'string') Object.assign(qs, Object.fromEntries(new URLSearchParams(req.querystring)));
    else if (req.querystring) for (const [k, v] of Object.entries(req.querystring)) qs[k] = String(v);
    let body: unknown;
    let parseError: EsError | undefined;
    try {
      body = parseBody(req.body, path);
    } catch (err) {
      if (!(err instanceof EsError)) throw err;
      body = req.body;
      parseError = err;
    }
    this.requests.push({ method, path, querystring: qs, body });
    const fault = this.takeRequestFault(method, path);
    if (fault === 'connection') return { statusCode: 0, body: undefined };
    if (fault) return { statusCode: fault.status, body: fault.body === undefined ? faultBody(fault.status) : fault.body };
    if (parseError) return { statusCode: parseError.status, body: parseError.body };
    try {
      return this.router.route({ method, path, qs, body });
    } catch (err) {
      if (err instanceof EsError) return { statusCode: err.status, body: err.body };
      // a bug of the fake itself: loud, never a silent success
      return {
        statusCode: 500,
        body: errorBody(500, { type: 'fake_internal_error', reason: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      };
    }
  }

  /** Routes every request of an `@elastic/elasticsearch-mock` instance to this fake. */
  mount(mock: MockInstance): void {
    mock.add({ method: ['GET', 'POST', 'PUT', 'DELETE', 'HEAD'], path: ['/', '/*'] }, (params: MockPattern) => {
      const method = String(params.method);
      // the mock hands over a decoded path: re-encode each segment so ids holding `/` or `%` survive
      const path = `/${String(params.path)
        .split('/')
        .filter((s) => s !== '')
        .map(encodeURIComponent)
        .join('/')}`;
      let r: FakeEsResponse;
      try {
        r = this.handle({ method, path, querystring: params.querystring ?? {}, body: params.body ?? undefined });
      } catch (err) {
        // thrown inside elasticsearch-mock's callback it would be an uncaught exception: answer 500 instead
        r = {
          statusCode: 500,
          body: errorBody(500, { type: 'fake_internal_error', reason: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
        };
      }
      if (r.statusCode === 0)
        return new errors.ConnectionError('other side closed (connection dropped by the fake Elasticsearch)') as unknown as Obj;
      if (r.statusCode >= 400) {
        return new errors.ResponseError({
          body: r.body ?? '',
          statusCode: r.statusCode,
          headers: {},
          warnings: null,
          meta: {} as never,
        }) as unknown as Obj;
      }
      return typeof r.body === 'string' ? r.body : ((r.body ?? '') as Obj);
    });
  }

  /** Starts the HTTP transport on 127.0.0.1 (random port); returns `http://127.0.0.1:PORT`. */
  async listen(): Promise<string> {
    if (this.url) return this.url;
    const server = createServer((req, res) => this.serve(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this.url;
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let r: FakeEsResponse;
      try {
        let raw = Buffer.concat(chunks);
        if (/gzip/i.test(String(req.headers['content-encoding'] ?? ''))) raw = gunzipSync(raw);
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const text = raw.toString('utf8');
        r = this.handle({
          method: req.method ?? 'GET',
          path: url.pathname,
          querystring: url.search.slice(1),
          body: text === '' ? undefined : text,
        });
      } catch (err) {
        r = { statusCode: 400, body: errorBody(400, { type: 'parse_exception', reason: (err as Error).message }) };
      }
      if (r.statusCode === 0) {
        req.socket.destroy();
        return;
      }
      const payload = req.method === 'HEAD' || r.body === undefined ? '' : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
      res.writeHead(r.statusCode, {
        'x-elastic-product': 'Elasticsearch',
        'content-type': 'application/vnd.elasticsearch+json;compatible-with=8',
        'content-length': Buffer.byteLength(payload),
      });
      res.end(payload);
    });
  }

  /** Stops the HTTP server (if any) and the refresh timer; safe to call twice. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    const server = this.server;
    this.server = undefined;
    this.url = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  // ---- fault injection -----------------------------------------------------------------------

  /**
   * The next `times` bulk items (or single-document writes) whose id and target (`_index` as
   * sent: alias or index) match fail with `error`, before anything is written.
   */
  failItems(match: (id: string, index: string) => boolean, error: ItemError, times = 1): void {
    this.itemFaults.push({ match, error, left: times });
  }

  /** The next `times` matching requests fail with an HTTP status (default Elasticsearch-like body) or a dropped connection. */
  failRequests(match: { method?: string; path?: RegExp }, failure: RequestFailure, times = 1): void {
    this.requestFaults.push({
      ...(match.method ? { method: match.method.toUpperCase() } : {}),
      ...(match.path ? { path: match.path } : {}),
      failure,
      left: times,
    });
  }

  /** The disk use `_cat/allocation` reports for the fake's one data node, in percent (default 40). */
  setDiskPercent(percent: number): void {
    this.router.diskPercent = percent;
  }

  /** The primary store size `_stats` reports for an index (default: the JSON of its documents). */
  setStoreBytes(index: string, bytes: number): void {
    this.router.storeBytes.set(index, bytes);
  }

  /** Sets one setting of an index as an operator or the cluster would (`blocks.write`, `blocks.read_only_allow_delete`). */
  setIndexSetting(index: string, key: string, value: unknown): void {
    const idx = this.cluster.indices.get(index);
    if (!idx) throw new Error(`no index ${index}`);
    let at = ((idx.settings as Obj).index ??= {}) as Obj;
    const path = key.split('.');
    for (const p of path.slice(0, -1)) at = (at[p] ??= {}) as Obj;
    at[path[path.length - 1] as string] = value;
  }

  /** Drops every pending item and request fault. */
  clearFaults(): void {
    this.itemFaults.length = 0;
    this.requestFaults.length = 0;
  }

  private takeItemFault(id: string, index: string): ItemError | undefined {
    const f = this.itemFaults.find((x) => x.left > 0 && x.match(id, index));
    if (!f) return undefined;
    f.left--;
    return f.error;
  }

  private takeRequestFault(method: string, path: string): RequestFailure | undefined {
    const f = this.requestFaults.find((x) => {
      if (x.left <= 0 || (x.method && x.method !== method)) return false;
      if (!x.path) return true;
      x.path.lastIndex = 0;
      return x.path.test(path);
    });
    if (!f) return undefined;
    f.left--;
    return f.failure;
  }

  // ---- inspection ----------------------------------------------------------------------------

  /**
   * Realtime documents of a concrete index, or of every index behind an alias (empty when neither
   * exists). Through an alias, an id held by several indices shows its newest copy (`copies` lists them all).
   */
  docs(target: string): Map<string, { source: Record<string, unknown>; version: number }> {
    const one = this.cluster.indices.get(target);
    const indices = one ? [one] : this.cluster.aliasIndices(target);
    const out = new Map<string, { source: Record<string, unknown>; version: number }>();
    for (const idx of indices)
      for (const r of idx.live.values())
        if ((out.get(r.id)?.version ?? -1) < r.version) out.set(r.id, { source: clone(r.source), version: r.version });
    return out;
  }

  /** Every realtime copy of `id` behind an alias (or in an index), as `{index, version}`, by index name. */
  copies(target: string, id: string): { index: string; version: number }[] {
    const one = this.cluster.indices.get(target);
    const indices = one ? [one] : this.cluster.aliasIndices(target);
    return indices.flatMap((idx) => {
      const r = idx.live.get(id);
      return r ? [{ index: idx.name, version: r.version }] : [];
    });
  }

  /** The names of the indices behind an alias, sorted. */
  aliasIndices(alias: string): string[] {
    return this.cluster.aliasIndices(alias).map((i) => i.name);
  }

  /** Settings of a concrete index, nested and with string values, as GET /<index>/_settings shows them. */
  settings(index: string): Record<string, unknown> | undefined {
    return clone(this.cluster.indices.get(index)?.settings);
  }

  /** Aliases of a concrete index with their properties. */
  aliases(index: string): Record<string, unknown> | undefined {
    const idx = this.cluster.indices.get(index);
    return idx ? clone(Object.fromEntries(idx.aliases)) : undefined;
  }

  /** The stored lifecycle policies (as validated, `min_age` filled in). */
  policies(): Record<string, Record<string, unknown>> {
    return Object.fromEntries([...this.cluster.policies].map(([n, p]) => [n, clone(p.policy)]));
  }

  /**
   * One pass of index lifecycle management at `nowMs` (ms): the indices whose policy's delete
   * phase is due are deleted, their age counted from the date in their name when
   * `index.lifecycle.parse_origination_date` is set. Returns the deleted names.
   */
  runLifecycle(nowMs: number): string[] {
    return this.cluster.runLifecycle(nowMs);
  }

  /** Names of the concrete indices, sorted. */
  indices(): string[] {
    return [...this.cluster.indices.keys()].sort();
  }

  templates(): { component: Record<string, unknown>; index: Record<string, unknown> } {
    return {
      component: Object.fromEntries(clone([...this.cluster.componentTemplates])),
      index: Object.fromEntries(clone([...this.cluster.indexTemplates])),
    };
  }

  /** Makes every write so far searchable. */
  refresh(): void {
    this.cluster.refreshAll();
  }
}

/** The official client wired to `fake` through elasticsearch-mock, without client retries. */
export function mockedClient(fake: FakeElasticsearch): Client {
  const mock = new Mock();
  fake.mount(mock);
  // elasticsearch-mock's connection lacks close(), which Client.close() calls, and reads only
  // string bodies: a Buffer (a bulk body sent as bytes, as a real node takes it) is decoded first
  class Connection extends mock.getConnection() {
    override async close(): Promise<void> {}
  }
  const request = Connection.prototype.request;
  Connection.prototype.request = function (this: Connection, ...args: Parameters<typeof request>) {
    const [params] = args;
    if (Buffer.isBuffer(params.body)) params.body = params.body.toString('utf8');
    return request.apply(this, args);
  } as typeof request;
  return new Client({ node: 'http://localhost:9200', Connection, maxRetries: 0 });
}
