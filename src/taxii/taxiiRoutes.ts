import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { watchCollectionDescription, watchCollectionId } from '../share/index.js';
import type { CollectionObject, CollectionPage, Store, VersionMatch, Watch } from '../store/index.js';
import {
  STIX_MEDIA_TYPE,
  TAXII_MEDIA_TYPE,
  TaxiiParamError,
  acceptsTaxii,
  formatTimestamp,
  taxiiRequest,
  type TaxiiQuery,
} from './taxiiParams.js';

/** Where TAXII is served: discovery at `${TAXII_PATH}/`, the one API root under it. */
export const TAXII_PATH = '/taxii2';
const ROOT = `${TAXII_PATH}/sandtrail`;

/** Whether a request URL is TAXII's (its errors are answered in TAXII's error message). */
export const isTaxiiUrl = (url: string): boolean => url === TAXII_PATH || url.startsWith(`${TAXII_PATH}/`);

/** A TAXII 2.1 error message (§3.6.1). */
export function taxiiError(reply: FastifyReply, status: number, title: string, description: string): FastifyReply {
  return send(reply.code(status), { title, description, http_status: String(status) });
}

/**
 * An answer in TAXII's media type, spelled exactly (`version=2.1`, no charset): clients compare
 * its parameters as text, and a string body would have Fastify quote the version and add a charset.
 */
function send(reply: FastifyReply, body: unknown): FastifyReply {
  return reply.header('content-type', TAXII_MEDIA_TYPE).send(Buffer.from(JSON.stringify(body)));
}

export interface TaxiiOptions {
  store: Pick<Store, 'watches' | 'collections'>;
  /** Brings a watch's collection up to its hits before it is read (absent: read as it is). */
  sync?: (w: Watch) => Promise<void>;
  /** serve.publicUrl without its trailing slash; '' for path-absolute URLs. */
  publicRoot: string;
}

/** An object's version: its modified (or created) time; an observable has neither, and its version is when it was added. */
const versionOf = (x: CollectionObject): string => x.version || formatTimestamp(x.dateAdded);
const objectOf = (x: CollectionObject): Record<string, unknown> => x.object;

interface Resolved {
  id: string;
  title: string;
  description: string;
  watch?: Watch;
}

/**
 * TAXII 2.1 (read-only) over the shared collections: discovery, one API root, a collection per
 * watchlist and per saved export, their objects, manifests and versions with `added_after`,
 * `limit`/`next` paging and `match[id|type|version|spec_version]`. Access is serve's (its
 * onRequest guard runs first).
 */
export function registerTaxii(app: FastifyInstance, o: TaxiiOptions): void {
  const { store } = o;
  app.addHook('onRequest', async (req, reply) => {
    if (!isTaxiiUrl(req.url.split('?')[0] ?? '')) return;
    if (!acceptsTaxii(req.headers.accept)) return taxiiError(reply, 406, 'Not Acceptable', `this server answers ${TAXII_MEDIA_TYPE} only`);
  });

  const collections = async (): Promise<Resolved[]> => {
    const watches = await store.watches.list();
    const saved = (await store.collections.list()).filter((c) => c.kind === 'export');
    return [
      ...watches.map((w) => ({ id: watchCollectionId(w), title: `watch ${w.name}`, description: watchCollectionDescription(w), watch: w })),
      ...saved.map((c) => ({ id: c.id, title: `export ${c.name}`, description: c.description })),
    ];
  };
  const resolve = async (req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply): Promise<Resolved | undefined> => {
    const found = (await collections()).find((c) => c.id === req.params.id);
    if (!found) taxiiError(reply, 404, 'Collection not found', `no collection ${req.params.id} on this server`);
    return found;
  };
  const info = (c: Resolved) => ({
    id: c.id,
    title: c.title,
    description: c.description,
    can_read: true,
    can_write: false,
    media_types: [STIX_MEDIA_TYPE],
  });

  app.get(`${TAXII_PATH}/`, async (_req, reply) =>
    send(reply, {
      title: 'sandtrail',
      description:
        'Sandbox behaviour reports of the Google Threat Intelligence file-behaviour feed: watchlist hits and saved exports as STIX 2.1',
      default: `${o.publicRoot}${ROOT}/`,
      api_roots: [`${o.publicRoot}${ROOT}/`],
    }),
  );
  app.get(`${ROOT}/`, async (_req, reply) =>
    send(reply, {
      title: 'sandtrail',
      description: 'One collection per watchlist and per saved export (read only)',
      versions: [TAXII_MEDIA_TYPE],
      max_content_length: 0,
    }),
  );
  app.get(`${ROOT}/collections/`, async (_req, reply) => send(reply, { collections: (await collections()).map(info) }));
  app.get<{ Params: { id: string } }>(`${ROOT}/collections/:id/`, async (req, reply) => {
    const c = await resolve(req, reply);
    return c ? send(reply, info(c)) : reply;
  });

  /** A page of a collection's objects for a request, after bringing a watch's collection up to date. */
  const page = async (
    req: FastifyRequest<{ Params: { id: string }; Querystring: TaxiiQuery }>,
    reply: FastifyReply,
    version: VersionMatch,
    ids?: string[],
  ): Promise<CollectionPage | undefined> => {
    let asked;
    try {
      asked = taxiiRequest(req.query, { version });
    } catch (err) {
      if (err instanceof TaxiiParamError) return void taxiiError(reply, 400, 'Bad request', err.message);
      throw err;
    }
    const c = await resolve(req, reply);
    if (!c) return undefined;
    if (c.watch && o.sync) await o.sync(c.watch);
    if (asked.none) return { objects: [], more: false };
    return store.collections.objects(c.id, { ...asked.query, ...(ids ? { ids } : {}) });
  };
  /** A page as TAXII's envelope (`objects` or `versions`); no page: the error was answered already. */
  const envelope = (
    reply: FastifyReply,
    p: CollectionPage | undefined,
    key: string,
    item: (x: CollectionObject) => unknown,
  ): FastifyReply => {
    if (!p) return reply;
    const items = p.objects.map(item);
    const first = p.objects[0];
    const last = p.objects[p.objects.length - 1];
    if (first && last) {
      reply.header('x-taxii-date-added-first', formatTimestamp(first.dateAdded));
      reply.header('x-taxii-date-added-last', formatTimestamp(last.dateAdded));
    }
    return send(reply, {
      more: p.more,
      ...(p.more && last ? { next: String(last.dateAdded) } : {}),
      ...(items.length ? { [key]: items } : {}),
    });
  };
  const manifestEntry = (x: CollectionObject) => ({
    id: x.id,
    date_added: formatTimestamp(x.dateAdded),
    version: versionOf(x),
    media_type: STIX_MEDIA_TYPE,
  });

  type ObjectsRoute = { Params: { id: string }; Querystring: TaxiiQuery };
  app.get<ObjectsRoute>(`${ROOT}/collections/:id/objects/`, async (req, reply) => {
    return envelope(reply, await page(req, reply, { last: true }), 'objects', objectOf);
  });
  app.get<ObjectsRoute>(`${ROOT}/collections/:id/manifest/`, async (req, reply) => {
    return envelope(reply, await page(req, reply, { last: true }), 'objects', manifestEntry);
  });
  type ObjectRoute = { Params: { id: string; objectId: string }; Querystring: TaxiiQuery };
  /** An object's own listing: 404 when the collection holds no version of it at all. */
  const objectPage = async (req: FastifyRequest<ObjectRoute>, reply: FastifyReply, version: VersionMatch) => {
    const p = await page(req, reply, version, [req.params.objectId]);
    if (!p || p.objects.length > 0) return p;
    const any = await store.collections.objects(req.params.id, { ids: [req.params.objectId], version: { all: true }, limit: 1 });
    if (any.objects.length === 0)
      return void taxiiError(reply, 404, 'Object not found', `collection ${req.params.id} holds no ${req.params.objectId}`);
    return p;
  };
  app.get<ObjectRoute>(`${ROOT}/collections/:id/objects/:objectId/`, async (req, reply) => {
    return envelope(reply, await objectPage(req, reply, { last: true }), 'objects', objectOf);
  });
  app.get<ObjectRoute>(`${ROOT}/collections/:id/objects/:objectId/versions/`, async (req, reply) => {
    return envelope(reply, await objectPage(req, reply, { all: true }), 'versions', versionOf);
  });
}
