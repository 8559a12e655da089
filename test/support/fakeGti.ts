import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isMinuteId } from '../../src/minute/index.js';
import { ArtefactLinks } from './fakeGti/artefactLinks.js';
import { apiError as err, redirect, type Exchange } from './fakeGti/exchange.js';
import { FaultState, type FakeGtiFaults } from './fakeGti/faults.js';
import { FeedBatches } from './fakeGti/feedBatches.js';
import { FileCatalog, type ArtefactKind, type FakeFile } from './fakeGti/fileCatalog.js';
import { operationOf } from './fakeGti/operationOf.js';
import { registerStartedFake } from './fakeGti/registry.js';
import { routeFileApi } from './fakeGti/routeFileApi.js';
import { sendBytes, sendFile } from './fakeGti/sendFile.js';

export type {
  BurstFault,
  FakeGtiFaults,
  ResetMidBodyFault,
  ResetMidObjectFault,
  SlowBodyFault,
  TruncateArtefactFault,
  TruncateFault,
} from './fakeGti/faults.js';
export type { ArtefactKind, FakeFile } from './fakeGti/fileCatalog.js';
export { makeFakeFile, type MakeFakeFileOptions } from './fakeGti/makeFakeFile.js';
export { tarStream, ustarHeader, type TarEntry } from './fakeGti/hourPackage.js';

export interface FakeGtiOptions {
  apiKey: string;
  /** `overall_quotas` document per user id. */
  quotas?: Record<string, unknown>;
  /**
   * Directory of minute batches `YYYYMMDDhhmm.jsonl.bz2` (as `writeFeed` writes them) and optional
   * hourly packages `YYYYMMDDhh.tar.bz2`. Read on every request, so files may appear at run time.
   */
  feedDir?: string;
  /** Clock for `notAvailableLagMinutes`; default the real one. */
  now?: () => Date;
  /** Spelling served in the feed path (the other one answers 404); default `file_behaviours`. */
  pathSpelling?: 'file_behaviours' | 'file-behaviours';
  /** Faults in force from the start. */
  faults?: FakeGtiFaults;
  /** Port on 127.0.0.1; default 0 (a random free one). */
  port?: number;
  /** bzip2 program for hourly packages built on the fly; default lbzip2 when on PATH, else bzip2. */
  compressor?: string;
  /** Called once per request, when its status is known (0: the socket was reset before any response). */
  onRequest?: (r: FakeGtiRequest) => void;
  /** Files the API knows: their behaviour reports, private report and artefacts. */
  files?: FakeFile[];
  /** Account has a Private Scanning licence (default true); false → every /private/ request answers 403 ForbiddenError. */
  privateLicence?: boolean;
  /**
   * Why this test's requests to the fake are not compared with a quota ledger (a test of the fake
   * itself, of the bare HTTP client). Without it, a test whose fake answered API requests must
   * call `accountApi` (test/support/apiAccounting.ts), or it fails when it ends.
   */
  unmetered?: string;
}

/** One request as the fake saw it. The API key itself is never kept. */
export interface FakeGtiRequest {
  method: string;
  /** Path without the query string, e.g. `/api/v3/feeds/file_behaviours/202611010000` or `/download/minute/202611010000`. */
  path: string;
  /** The raw query string, without `?` ('' when none). */
  query: string;
  hadKey: boolean;
  xTool: string | undefined;
  /** HTTP status answered; 0 when the connection was reset before any response. A cut download shows 200. */
  status: number;
  /**
   * The API operation the request is, as the service meters it (`GET /files/{id}/behaviours`,
   * `GET /users/{id}/overall_quotas`, a feed-line link on another host as
   * `GET /feeds/file_behaviours/{token}/pcap`), or null when it is none: a download from the
   * storage host a 302 pointed to belongs to the call that answered the 302.
   */
  operation: string | null;
}

export interface FakeGti {
  /** `http://127.0.0.1:PORT/api/v3` */
  baseUrl: string;
  /** `http://127.0.0.1:PORT` (download URLs live here, outside `/api/v3`, and need no key). */
  origin: string;
  /** Every request received, in arrival order. */
  requests: FakeGtiRequest[];
  /** Merges into the faults in force; a key set to `undefined` removes that fault; counters of the given keys restart. */
  setFaults(patch: FakeGtiFaults): void;
  /** Removes every fault. */
  clearFaults(): void;
  /** The faults in force, with what is left of their counters. */
  readonly faults: FakeGtiFaults;
  /**
   * A feed line's `context_attributes` link to an artefact of one of `files`' behaviours:
   * `${baseUrl}/feeds/file_behaviours/<token>/<kind>` (key needed; 302 to the download), or with
   * `foreignHost` directly the key-less download URL on `origin` (a link to another host).
   * Throws RangeError for an unknown behaviour; an artefact the file lacks answers 404.
   */
  feedLink(behaviourId: string, kind: ArtefactKind, opts?: { foreignHost?: boolean }): string;
  /** Requests whose path starts with `pathPrefix` (and answered `status`, when given). */
  countFor(pathPrefix: string, status?: number): number;
  /**
   * The server's own count: answered requests (any status; not those reset before an answer) per
   * API operation. A request whose body was cut after its status line is answered: the service
   * charges when it answers.
   */
  operations(): Record<string, number>;
  close(): Promise<void>;
}

const FEED_RE = /^\/api\/v3\/feeds\/(file_behaviours|file-behaviours)\/(?:(hourly)\/)?([^/]+)$/;
const DOWNLOAD_RE = /^\/download\/(minute|hour)\/(\d{10}|\d{12})$/;
const QUOTAS_RE = /^\/api\/v3\/users\/([^/]+)\/overall_quotas$/;

function isHourId(s: string): boolean {
  return /^\d{10}$/.test(s) && isMinuteId(`${s}00`);
}

/**
 * A real HTTP server on loopback speaking the GTI API's contract (DESIGN §4) for the paths sandtrail
 * uses: `overall_quotas`, the per-minute feed and its hourly packages (302 to a download URL on the
 * same server, as the real API redirects to its storage host), the file routes (`/files/{id}/behaviours`,
 * `/file_behaviours/{id}` with relationships and artefacts, `/private/files/{sha256}`; see
 * fakeGti/routeFileApi.ts) and feed-line artefact links, with fault injection.
 */
export async function startFakeGti(o: FakeGtiOptions): Promise<FakeGti> {
  const requests: FakeGtiRequest[] = [];
  const faults = new FaultState(o.faults);
  const spelling = o.pathSpelling ?? 'file_behaviours';
  const now = o.now ?? (() => new Date());
  /** Download token → the batch it opens (reusable, like a signed URL before it expires). */
  const tokens = new Map<string, { kind: 'minute' | 'hour'; id: string }>();
  const batches = new FeedBatches(o.feedDir, o.compressor);
  const catalog = new FileCatalog(o.files);
  let origin = '';
  const artefacts = new ArtefactLinks(catalog, faults, () => origin, spelling);
  const fileApi = { catalog, faults, artefacts, origin: () => origin, privateLicence: o.privateLicence ?? true };
  let closed = false;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const key = req.headers['x-apikey'];
    const xTool = req.headers['x-tool'];
    const raw = req.url ?? '/';
    const entry: FakeGtiRequest = {
      method: req.method ?? 'GET',
      path,
      query: raw.includes('?') ? raw.slice(raw.indexOf('?') + 1) : '',
      hadKey: typeof key === 'string',
      xTool: typeof xTool === 'string' ? xTool : undefined,
      status: 0,
      operation: operationOf(req.method ?? 'GET', path),
    };
    requests.push(entry);
    const settle = (status: number): void => {
      entry.status = status;
      o.onRequest?.(entry);
    };
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      settle(status);
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
      res.end(text);
    };
    const notFound = (what: string): void => reply(404, err('NotFoundError', `${what} not found`));
    try {
      await route({ req, res, url, key, entry, settle, reply, notFound });
    } catch (e) {
      if (!res.headersSent) reply(500, err('InternalError', `fake GTI: ${(e as Error).message}`));
      else res.destroy();
    }
  };

  const route = async (ex: Exchange): Promise<void> => {
    const { req, res, url, key, entry, settle, reply, notFound } = ex;
    const path = entry.path;

    // The storage host: no key needed, the token is the credential.
    if (await artefacts.download(ex)) return;
    const dl = DOWNLOAD_RE.exec(path);
    if (dl) {
      const [, kind, id] = dl as unknown as [string, 'minute' | 'hour', string];
      const t = tokens.get(url.searchParams.get('token') ?? '');
      if (req.method !== 'GET' || !t || t.kind !== kind || t.id !== id)
        return reply(403, err('ForbiddenError', 'invalid or expired download token'));
      const file = kind === 'minute' ? await batches.minuteFile(id) : await batches.hourFile(id);
      if (!file) return notFound(`batch ${id}`);
      if (faults.takeStorageForbidden(id)) return reply(403, err('ForbiddenError', 'signed link expired'));
      if (faults.takeEmpty(id)) {
        settle(200);
        return sendBytes(res, Buffer.alloc(0), { chunked: faults.chunkedDownloads });
      }
      if (faults.takeCorrupt(id)) {
        const bytes = readFileSync(file.path);
        const mid = Math.floor(bytes.length / 2);
        bytes[mid] = (bytes[mid] as number) ^ 0xff;
        settle(200);
        return sendBytes(res, bytes, { chunked: faults.chunkedDownloads });
      }
      const cutAt = faults.takeTruncate(id, file.size);
      settle(200);
      return sendFile(res, file.path, file.size, { bytesPerSecond: faults.slowFor(id), cutAt, chunked: faults.chunkedDownloads });
    }

    if (!path.startsWith('/api/v3/')) return notFound(`resource ${path}`);
    const isFeed = path.startsWith('/api/v3/feeds/');
    if (isFeed && faults.takeReset()) {
      settle(0);
      req.socket.destroy();
      return;
    }
    if (/^\/api\/v3\/(files|file_behaviours|private)\//.test(path) && faults.takeApiReset()) {
      settle(0);
      req.socket.destroy();
      return;
    }
    if (typeof key !== 'string') return reply(401, err('AuthenticationRequiredError', 'X-Apikey header is missing'));
    if (key !== o.apiKey) return reply(401, err('WrongCredentialsError', 'Wrong API key'));
    const burst = faults.takeBurst(isFeed);
    if (burst) {
      const headers: Record<string, string> = burst.retryAfterS !== undefined ? { 'retry-after': String(burst.retryAfterS) } : {};
      return reply(burst.status, err(burst.code, burst.message), headers);
    }

    if (await routeFileApi(ex, fileApi)) return;
    if (artefacts.feedRequest(ex)) return;

    const q = QUOTAS_RE.exec(path);
    if (q && req.method === 'GET') {
      const doc = o.quotas?.[decodeURIComponent(q[1] as string)];
      return doc ? reply(200, { data: doc }) : reply(404, err('NotFoundError', 'user not found'));
    }

    const f = FEED_RE.exec(path);
    if (f && req.method === 'GET') {
      const [, pathSpelling, hourly, id] = f as unknown as [string, string, string | undefined, string];
      if (pathSpelling !== spelling) return notFound(`resource ${path}`);
      const kind = hourly ? 'hour' : 'minute';
      if (kind === 'hour' ? !isHourId(id) : !isMinuteId(id))
        return reply(
          400,
          err(
            'InvalidArgumentError',
            `${kind === 'hour' ? 'hourly batch' : 'batch'} time must be ${kind === 'hour' ? 'YYYYMMDDhh' : 'YYYYMMDDhhmm'}, got ${id}`,
          ),
        );
      if (faults.notAvailable(id, now().getTime())) return reply(400, err('NotAvailableYet', `batch ${id} is not available yet`));
      if (faults.takeNotFound(id)) return notFound(`batch ${id}`);
      const exists = kind === 'minute' ? (await batches.minuteFile(id)) !== null : (await batches.hourSource(id)) !== null;
      if (!exists) return notFound(`batch ${id}`);
      const token = randomBytes(12).toString('hex');
      tokens.set(token, { kind, id });
      return redirect(ex, `${origin}/download/${kind}/${id}?token=${token}`);
    }

    notFound(`resource ${path}`);
  };

  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => void handle(req, res));
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;

  const fake: FakeGti = {
    baseUrl: `${origin}/api/v3`,
    origin,
    requests,
    setFaults: (patch) => faults.set(patch),
    clearFaults: () => faults.clear(),
    get faults() {
      return faults.snapshot();
    },
    feedLink: (behaviourId, kind, opts) => artefacts.feedLink(behaviourId, kind, opts),
    countFor: (pathPrefix, status) =>
      requests.filter((r) => r.path.startsWith(pathPrefix) && (status === undefined || r.status === status)).length,
    operations: () => {
      const out: Record<string, number> = {};
      for (const r of requests) if (r.operation !== null && r.status !== 0) out[r.operation] = (out[r.operation] ?? 0) + 1;
      return out;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy(); // keep-alive and in-flight (slow) downloads
      const stopped = batches.close();
      await done;
      await stopped;
    },
  };
  registerStartedFake({ fake, unmetered: o.unmetered });
  return fake;
}
