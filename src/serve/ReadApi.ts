import { METHODS } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config/index.js';
import { SandtrailError, errorCode, messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { FailedAuth, isLoopback } from '../ops/index.js';
import { guardAccess } from './guardAccess.js';
import { canonicalBehaviourId } from '../normalize/index.js';
import { isTaxiiUrl, registerTaxii, taxiiError } from '../taxii/index.js';
import { storeFileIdentity, type Store, type Watch } from '../store/index.js';
import {
  decodeAfterCursor,
  encodeAfterCursor,
  isFileHash,
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
import { MAX_PARAM_LENGTH, registerPivotRoutes } from './pivotRoutes.js';

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
const REQUEST_TIMEOUT_MS = 30_000;
/** How long a stop waits for requests under way before it cuts their connections. */
const CLOSE_GRACE_MS = 5_000;

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

  const sandtrail = (req: FastifyRequest, type: string, id: string, attributes: unknown, path: string): Record<string, unknown> =>
    v3Object(type, id, attributes, `${base(req)}/sandtrail/${path}`);
  registerPivotRoutes(app, { store, fail, object: sandtrail, pageLinks });
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
