import { METHODS } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/index.js';
import { SandtrailError, errorCode, messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { FailedAuth, isLoopback } from '../ops/index.js';
import { guardAccess } from './guardAccess.js';
import { canonicalBehaviourId } from '../normalize/index.js';
import { isTaxiiUrl, registerTaxii, taxiiError } from '../taxii/index.js';
import { HUNT_LIMITS, pivotKindOf, storeFileIdentity, type Store, type Watch } from '../store/index.js';
import {
  decodeAfterCursor,
  decodeHitCursor,
  encodeAfterCursor,
  encodeHitCursor,
  parseLimit,
  v3Error,
  v3Object,
  V3_ERRORS,
  withoutLinks,
  type V3ErrorCode,
} from './envelope.js';
import { answerClientError } from './clientError.js';
import { filePage } from './filePage.js';
import { HUNT_PAGE } from './huntPage.js';
import { registerHuntViews } from './huntViews.js';
import { decodePivotCursor, encodePivotCursor, pivotPage } from './pivotPage.js';

export interface ReadApiOptions {
  config: Config;
  store: Store;
  log: Logger;
  /** How wrong keys are counted per address (default: 10 a minute, then 429 for the rest of it). */
  failedKeys?: FailedAuth;
  /** Brings a watch's TAXII collection up to its hits before it is read (absent: served as the store holds it). */
  syncWatch?: (w: Watch) => Promise<void>;
}

export interface ReadApi {
  /** `http://host:port` (the v3 base is `${url}/api/v3`). */
  url: string;
  close(): Promise<void>;
}

const HEX = /^[0-9a-fA-F]+$/;
const MAX_PARAM_LENGTH = 2048;
const REQUEST_TIMEOUT_MS = 30_000;
/** An epoch `since` this large is in milliseconds (after 1973 in ms, after year 5138 in seconds). */
const MS_FROM = 1e11;
/** How long a stop waits for requests under way before it cuts their connections. */
const CLOSE_GRACE_MS = 5_000;
const isFileHash = (h: string): boolean => HEX.test(h) && [32, 40, 64].includes(h.length);

/**
 * Where a pivot value is read: a path segment when one can carry it, else the query (`.` and `..`
 * are resolved away by every URL parser, even percent-encoded; a segment is at most MAX_PARAM_LENGTH).
 */
function pivotPath(kind: string, value: string): { path: string; query: Record<string, string> } {
  const segment = encodeURIComponent(value);
  return value === '.' || value === '..' || segment.length > MAX_PARAM_LENGTH
    ? { path: `pivots/${kind}`, query: { value } }
    : { path: `pivots/${kind}/${segment}`, query: {} };
}

/** pivotPath as one relative URL. */
function pivotHref(kind: string, value: string): string {
  const { path, query } = pivotPath(kind, value);
  return query.value === undefined ? path : `${path}?${new URLSearchParams(query).toString()}`;
}

/**
 * `sandtrail serve`: the store read through the GTI v3 API's own envelope, so a script written
 * for the official clients can point its base URL here and read unchanged: file behaviours, a
 * file's behaviours (limit ≤ 40, cursor paging), private file reports; sandtrail's pivot searches
 * under /api/v3/sandtrail/; a hunting page at `/`. Keys in `x-apikey` (serve.apiKeys); without
 * keys it binds loopback only.
 */
export async function startReadApi(o: ReadApiOptions): Promise<ReadApi> {
  const { serve } = o.config;
  const keys = (serve.apiKeys ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  if (!isLoopback(serve.host) && keys.length === 0) {
    throw new SandtrailError(
      'CONFIG_INVALID',
      `serve.host ${serve.host} is reachable beyond this machine: set serve.apiKeys (SANDTRAIL_SERVE_API_KEYS) or bind 127.0.0.1`,
    );
  }
  const { store } = o;
  // loaded when the API starts, not whenever the CLI does
  const { default: Fastify } = await import('fastify');
  // TAXII's paths answer in TAXII's error message, the rest in the v3 envelope
  const fail = (reply: FastifyReply, code: V3ErrorCode, message: string): FastifyReply => {
    if (!isTaxiiUrl(reply.request.url.split('?')[0] ?? '')) return reply.code(V3_ERRORS[code]).send(v3Error(code, message));
    if (V3_ERRORS[code] === 401) reply.header('www-authenticate', 'Basic realm="sandtrail", charset="UTF-8"');
    return taxiiError(reply, V3_ERRORS[code], code.replace(/Error$/, '').replace(/([a-z])([A-Z])/g, '$1 $2'), message);
  };
  // a request Fastify cannot route (a bad percent-encoding) is answered in the API's envelope too
  const app = Fastify({
    logger: false,
    frameworkErrors: (err, _req, reply) => fail(reply, 'BadRequestError', err.message),
    // behaviour ids run to sandbox names of any length (Fastify's default cuts path parameters at 100)
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // a client that never finishes its request is cut off, so neither it nor a stop waits on it
    requestTimeout: REQUEST_TIMEOUT_MS,
    // a request Node cannot parse (a bad header, one past 16 KB, one cut off) in the API's envelope too
    clientErrorHandler: answerClientError,
    // request deadlines looked for every second (Node's default, 30 s, let a slow body run that much longer)
    http: { connectionsCheckingInterval: 1000 },
  });
  // every method Node parses (PROPFIND, SEARCH...) routed, so a path the API answers says 405 to each
  for (const m of METHODS) if (m !== 'CONNECT' && !app.supportedMethods.includes(m)) app.addHttpMethod(m, { hasBody: true });
  // this API reads: a body is never parsed (another method than GET is 405 whatever it sends)
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => {
    // drained, not kept: left unread, its bytes would be parsed as the connection's next request
    payload.resume();
    done(null, undefined);
  });
  // links name the address clients were given when there is one, not what a request's Host says:
  // reachable from a network (keys on) without serve.publicUrl they are path-absolute, since any
  // client may send any Host; keyless, the Host was checked to name this machine
  const publicBase = serve.publicUrl ? `${serve.publicUrl.replace(/\/+$/, '')}/api/v3` : undefined;
  const base = (req: FastifyRequest): string =>
    publicBase ?? (keys.length > 0 ? '/api/v3' : `${req.protocol}://${req.headers.host ?? `${serve.host}:${serve.port}`}/api/v3`);
  // every path the API answers, so another method on it is told so (405), not "not found"
  const paths: string[] = [];
  app.addHook('onRoute', (route) => {
    if ([route.method].flat().includes('GET')) paths.push(route.url);
  });

  // the file the store was opened on: one removed or replaced since is said, not read as if current
  const opened = storeFileIdentity(store);
  let replacedSaid = false;
  const storeReplaced = (): boolean => {
    if (opened === undefined || storeFileIdentity(store) === opened) return false;
    if (!replacedSaid)
      o.log.error({ store: store.spec }, 'the store file was removed or replaced since serve started: restart serve to read it');
    replacedSaid = true;
    return true;
  };
  app.addHook('preHandler', async (req, reply) => {
    if (req.routeOptions.url !== '/' && storeReplaced()) {
      return fail(
        reply,
        'TransientError',
        'the store file was removed or replaced since this server started: restart it to read the store now there',
      );
    }
  });

  guardAccess(app, { keys, failedKeys: o.failedKeys ?? new FailedAuth(), log: o.log, fail });
  app.setErrorHandler((err, req, reply) => {
    const status = (err as { statusCode?: number }).statusCode ?? 500;
    if (status < 500) return fail(reply, 'BadRequestError', messageOf(err));
    // a store fault: logged whole here, answered without the store's paths
    o.log.error({ code: errorCode(err), url: req.url.split('?')[0], err: messageOf(err) }, 'read API request failed');
    const code = errorCode(err);
    return fail(reply, 'TransientError', `the store could not be read${code ? ` (${code})` : ''}: see the server's log`);
  });
  app.setNotFoundHandler((req, reply) => fail(reply, 'NotFoundError', `Resource not found: ${req.url.split('?')[0]}`));

  /**
   * A page's links: `self` with the query it was asked with, `next` with the same query and the
   * next cursor (a filter such as `since` must hold on every page).
   */
  const pageLinks = (req: FastifyRequest, path: string, query: Record<string, string | undefined>, next: string | undefined) => {
    const url = (q: Record<string, string | undefined>): string => {
      const given = Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined);
      return `${base(req)}/${path}${given.length ? `?${new URLSearchParams(given).toString()}` : ''}`;
    };
    return { self: url(query), ...(next ? { next: url({ ...query, cursor: next }) } : {}) };
  };

  app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(HUNT_PAGE));

  const behaviourObject = (req: FastifyRequest, doc: Record<string, unknown> & { id: string }): Record<string, unknown> => {
    const extra: Record<string, unknown> = {};
    if (doc.relationships) extra.relationships = doc.relationships;
    if (doc.context_attributes) extra.context_attributes = doc.context_attributes;
    return v3Object(
      'file_behaviour',
      doc.id,
      doc.attributes,
      `${base(req)}/file_behaviours/${encodeURIComponent(doc.id)}`,
      withoutLinks(extra),
    );
  };

  app.get<{ Params: { id: string } }>('/api/v3/file_behaviours/:id', async (req, reply) => {
    const doc = await store.sink.get(canonicalBehaviourId(req.params.id));
    if (!doc) return fail(reply, 'NotFoundError', `File behaviour "${req.params.id}" not found`);
    return { data: behaviourObject(req, doc as unknown as Record<string, unknown> & { id: string }) };
  });

  app.get<{ Params: { hash: string }; Querystring: { limit?: string; cursor?: string } }>(
    '/api/v3/files/:hash/behaviours',
    async (req, reply) => {
      const { hash } = req.params;
      if (!isFileHash(hash)) return fail(reply, 'InvalidArgumentError', `"${hash}" is not a valid file hash (MD5, SHA-1 or SHA-256)`);
      const limit = parseLimit(req.query.limit);
      if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
      // the id the last page ended with: a behaviour added or removed meanwhile moves no page
      const after = req.query.cursor === undefined ? '' : decodeAfterCursor(req.query.cursor);
      if (after === null) return fail(reply, 'InvalidArgumentError', 'Invalid cursor');
      const page = await filePage(store, hash, limit, after, (doc) => behaviourObject(req, doc));
      if (!page) return fail(reply, 'NotFoundError', `File "${hash}" not found`);
      const { data, count, last } = page;
      const next = last === undefined ? undefined : encodeAfterCursor(last);
      return {
        data,
        meta: { count, ...(next ? { cursor: next } : {}) },
        links: pageLinks(req, `files/${hash}/behaviours`, { limit: String(limit), cursor: req.query.cursor }, next),
      };
    },
  );

  app.get<{ Params: { id: string } }>('/api/v3/private/files/:id', async (req, reply) => {
    const { id } = req.params;
    if (!(HEX.test(id) && id.length === 64)) return fail(reply, 'InvalidArgumentError', 'private file reports are keyed by SHA-256 only');
    const doc = await store.privateFiles.get(id);
    if (!doc) return fail(reply, 'NotFoundError', `Private file "${id}" not found`);
    const attributes = { ...doc.attributes, ...(doc.gti_assessment ? { gti_assessment: doc.gti_assessment } : {}) };
    return { data: v3Object('private_file', doc.id, attributes, `${base(req)}/private/files/${doc.id}`) };
  });

  // a kind in its stored spelling (sigma_rule_id) or the command line's (sigma-rule)
  const KINDS = 'behash, sigma_rule_id (or sigma-rule), ja3, ja3s, dropped_sha256 (or dropped-sha256)';
  const sandtrail = (req: FastifyRequest, type: string, id: string, attributes: unknown, path: string): Record<string, unknown> =>
    v3Object(type, id, attributes, `${base(req)}/sandtrail/${path}`);
  type PivotQuery = { limit?: string; cursor?: string; value?: string };
  const pivotRoute = async (req: FastifyRequest<{ Querystring: PivotQuery }>, reply: FastifyReply, kindRaw: string, value: string) => {
    const kind = pivotKindOf(kindRaw);
    if (!kind) return fail(reply, 'InvalidArgumentError', `pivot kind must be one of ${KINDS}, sha256`);
    const limit = parseLimit(req.query.limit);
    if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
    // the last behaviour the previous page gave: behaviours stored or expired meanwhile move no page
    const anchor = req.query.cursor === undefined ? undefined : decodePivotCursor(req.query.cursor);
    if (anchor === null) return fail(reply, 'InvalidArgumentError', 'Invalid cursor');
    // the stores page through the newest 10,000 of a value's behaviours: a cursor past them is
    // refused, not answered with another page, and the last page ends at the window
    const window = HUNT_LIMITS.window;
    if (anchor && anchor.offset >= window)
      return fail(reply, 'InvalidArgumentError', `cursor past the first ${window} behaviours of a value, the window pivots page through`);
    const { stats, start } = await pivotPage(store.hunt, kind, value, limit, anchor);
    const after = Math.min(start + stats.newest.length, window);
    const last = stats.newest[stats.newest.length - 1];
    const more = last !== undefined && after < stats.behaviours && after < window;
    // the value as the store compares it (hashes lower-case), in the id and links alike
    const { path, query } = pivotPath(kind, stats.value);
    const next = more ? encodePivotCursor({ offset: after, date: last.analysis_date, id: last.id }) : undefined;
    return {
      data: sandtrail(req, 'sandtrail_pivot', `${kind}:${stats.value}`, stats, pivotHref(kind, stats.value)),
      meta: {
        ...(next ? { cursor: next } : {}),
        // more behaviours than any page reaches: the total is in attributes.behaviours
        ...(after >= window && after < stats.behaviours ? { window_end: true } : {}),
      },
      links: pageLinks(req, `sandtrail/${path}`, { ...query, limit: req.query.limit, cursor: req.query.cursor }, next),
    };
  };
  app.get<{ Params: { kind: string; value: string }; Querystring: PivotQuery }>('/api/v3/sandtrail/pivots/:kind/:value', (req, reply) =>
    pivotRoute(req, reply, req.params.kind, req.params.value),
  );
  // any stored value by query: one a path segment cannot carry (`.`, `..`, longer than a segment may be)
  app.get<{ Params: { kind: string }; Querystring: PivotQuery }>('/api/v3/sandtrail/pivots/:kind', (req, reply) =>
    req.query.value === undefined
      ? fail(reply, 'InvalidArgumentError', 'the value to pivot on is missing: /pivots/KIND/VALUE or /pivots/KIND?value=VALUE')
      : pivotRoute(req, reply, req.params.kind, req.query.value),
  );

  app.get<{ Params: { kind: string }; Querystring: { since?: string; limit?: string } }>(
    '/api/v3/sandtrail/top/:kind',
    async (req, reply) => {
      const kind = pivotKindOf(req.params.kind);
      if (!kind || kind === 'sha256') return fail(reply, 'InvalidArgumentError', `pivot kind must be one of ${KINDS}`);
      const limit = parseLimit(req.query.limit);
      if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
      const sinceRaw = epochParam(req.query.since);
      if (sinceRaw === null) return fail(reply, 'InvalidArgumentError', 'since must be epoch seconds (or milliseconds)');
      // 12 digits or more are milliseconds, as the watch hits route reads them
      const since = sinceRaw !== undefined && sinceRaw >= MS_FROM ? Math.floor(sinceRaw / 1000) : sinceRaw;
      const top = await store.hunt.top(kind, { since, limit });
      return {
        data: top.map((t) => sandtrail(req, 'sandtrail_pivot', `${kind}:${t.value}`, t, pivotHref(kind, t.value))),
      };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { limit?: string } }>('/api/v3/sandtrail/related/:id', async (req, reply) => {
    const limit = parseLimit(req.query.limit, 20);
    if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
    const related = await store.hunt.related(canonicalBehaviourId(req.params.id), { limit });
    if (!related) return fail(reply, 'NotFoundError', `File behaviour "${req.params.id}" not found`);
    return { data: sandtrail(req, 'sandtrail_related', related.id, related, `related/${encodeURIComponent(related.id)}`) };
  });

  app.get<{ Params: { hash: string } }>('/api/v3/sandtrail/files/:hash', async (req, reply) => {
    if (!isFileHash(req.params.hash)) return fail(reply, 'InvalidArgumentError', `"${req.params.hash}" is not a valid file hash`);
    const roll = await store.hunt.fileRollup(req.params.hash);
    if (!roll) return fail(reply, 'NotFoundError', `File "${req.params.hash}" not found`);
    return { data: sandtrail(req, 'sandtrail_file', roll.sha256, roll, `files/${roll.sha256}`) };
  });

  app.get<{ Params: { name: string }; Querystring: { since?: string; limit?: string; cursor?: string } }>(
    '/api/v3/sandtrail/watches/:name/hits',
    async (req, reply) => {
      const watch = await store.watches.get(req.params.name);
      if (!watch) return fail(reply, 'NotFoundError', `Watch "${req.params.name}" not found`);
      const limit = parseLimit(req.query.limit);
      if (limit === null) return fail(reply, 'InvalidArgumentError', 'limit must be an integer between 1 and 40');
      // the last hit a page gave: hits recorded meanwhile (newest first) move no page
      const after = req.query.cursor === undefined ? undefined : decodeHitCursor(req.query.cursor);
      if (after === null) return fail(reply, 'InvalidArgumentError', 'Invalid cursor');
      const sinceRaw = epochParam(req.query.since);
      if (sinceRaw === null) return fail(reply, 'InvalidArgumentError', 'since must be epoch seconds (or milliseconds)');
      // epoch seconds, as `top` takes; 12 digits or more (after 1973 in milliseconds, after 5138 in
      // seconds) are milliseconds, the unit hits are kept in and the first form this route took
      const since = sinceRaw !== undefined && sinceRaw < MS_FROM ? sinceRaw * 1000 : sinceRaw;
      // one more than asked says whether a next page exists
      const hits = await store.watches.hits(watch.name, { since, limit: limit + 1, ...(after ? { after } : {}) });
      const more = hits.length > limit;
      const path = `watches/${encodeURIComponent(watch.name)}/hits`;
      const lastGiven = hits[limit - 1];
      const next = more && lastGiven ? encodeHitCursor(lastGiven) : undefined;
      return {
        data: hits
          .slice(0, limit)
          .map((h) => sandtrail(req, 'sandtrail_watch_hit', `${h.watch}:${h.behaviourId}:${h.lastModified}`, h, path)),
        meta: next ? { cursor: next } : {},
        links: pageLinks(req, `sandtrail/${path}`, { limit: req.query.limit, since: req.query.since, cursor: req.query.cursor }, next),
      };
    },
  );

  registerHuntViews(app, { store, fail, object: sandtrail });
  registerTaxii(app, {
    store,
    ...(o.syncWatch ? { sync: o.syncWatch } : {}),
    publicRoot: serve.publicUrl ? serve.publicUrl.replace(/\/+$/, '') : '',
  });

  // every method but GET and HEAD (TRACE, PROPFIND...), not only the common ones
  const otherMethods = app.supportedMethods.filter((m) => m !== 'GET' && m !== 'HEAD');
  for (const url of paths) {
    app.route({
      method: otherMethods,
      url,
      handler: async (req, reply) =>
        // a TAXII client adding objects is told the collection's can_write, as TAXII asks (403)
        isTaxiiUrl(url) && req.method === 'POST'
          ? fail(reply, 'ForbiddenError', 'the collections of this server are read only (can_write: false)')
          : fail(
              reply.header('allow', 'GET, HEAD'),
              'MethodNotAllowedError',
              `${req.method} is not allowed here: this API only reads (GET)`,
            ),
    });
  }

  await app.listen({ port: serve.port, host: serve.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : serve.port;
  const url = `http://${serve.host.includes(':') ? `[${serve.host}]` : serve.host}:${port}`;
  o.log.info({ url, api: `${url}/api/v3`, keys: keys.length }, 'read API listening');
  const close = async (): Promise<void> => {
    // requests under way get a moment to finish; then every connection is cut
    const force = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
    try {
      await app.close();
    } finally {
      clearTimeout(force);
    }
  };
  return { url, close };
}

/** A `since` parameter: absent, or whole digits (an empty or loose value is an error, not 0). */
function epochParam(raw: string | undefined): number | undefined | null {
  if (raw === undefined) return undefined;
  return /^\d{1,16}$/.test(raw) ? Number(raw) : null;
}
