import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMinuteId } from '../../src/minute/index.js';
import { findCompressor } from '../../src/synth/index.js';
import { FaultState, type FakeGtiFaults } from './fakeGti/faults.js';
import { writeHourPackage, type TarEntry } from './fakeGti/hourPackage.js';
import { sendFile } from './fakeGti/sendFile.js';

export type { BurstFault, FakeGtiFaults, SlowBodyFault, TruncateFault } from './fakeGti/faults.js';
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
}

/** One request as the fake saw it. The API key itself is never kept. */
export interface FakeGtiRequest {
  method: string;
  /** Path without the query string, e.g. `/api/v3/feeds/file_behaviours/202611010000` or `/download/minute/202611010000`. */
  path: string;
  hadKey: boolean;
  xTool: string | undefined;
  /** HTTP status answered; 0 when the connection was reset before any response. A cut download shows 200. */
  status: number;
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
  /** Requests whose path starts with `pathPrefix` (and answered `status`, when given). */
  countFor(pathPrefix: string, status?: number): number;
  close(): Promise<void>;
}

type ErrorBody = { error: { code: string; message?: string } };

const err = (code: string, message: string): ErrorBody => ({ error: { code, message } });

/** One request being answered. */
interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  key: string | string[] | undefined;
  entry: FakeGtiRequest;
  /** Records the status (and reports the request) without writing anything. */
  settle(status: number): void;
  /** A JSON answer. */
  reply(status: number, body: unknown, headers?: Record<string, string>): void;
  notFound(what: string): void;
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
 * same server, as the real API redirects to its storage host), with fault injection.
 */
export async function startFakeGti(o: FakeGtiOptions): Promise<FakeGti> {
  const requests: FakeGtiRequest[] = [];
  const faults = new FaultState(o.faults);
  const spelling = o.pathSpelling ?? 'file_behaviours';
  const now = o.now ?? (() => new Date());
  /** Download token → the batch it opens (reusable, like a signed URL before it expires). */
  const tokens = new Map<string, { kind: 'minute' | 'hour'; id: string }>();
  const children = new Set<ChildProcess>();
  const hourCache = new Map<string, Promise<{ path: string; size: number }>>();
  let cacheDir: Promise<string> | undefined;
  let origin = '';
  let closed = false;

  const minuteFile = async (minute: string): Promise<{ path: string; size: number } | null> => {
    if (!o.feedDir) return null;
    const path = join(o.feedDir, `${minute}.jsonl.bz2`);
    const s = await stat(path).catch(() => null);
    return s?.isFile() ? { path, size: s.size } : null;
  };

  /** The hour's package on disk, or the minute files to build it from (null when neither exists). */
  const hourSource = async (hour: string): Promise<{ path: string; size: number } | { entries: TarEntry[] } | null> => {
    if (!o.feedDir) return null;
    const pkg = join(o.feedDir, `${hour}.tar.bz2`);
    const s = await stat(pkg).catch(() => null);
    if (s?.isFile()) return { path: pkg, size: s.size };
    const names = (await readdir(o.feedDir).catch(() => [] as string[]))
      .filter((n) => n.startsWith(hour) && /^\d{12}\.jsonl\.bz2$/.test(n))
      .sort();
    const entries: TarEntry[] = [];
    for (const name of names) {
      const path = join(o.feedDir, name);
      const fs = await stat(path).catch(() => null);
      if (fs?.isFile()) entries.push({ name, path, size: fs.size, mtimeMs: fs.mtimeMs });
    }
    return entries.length > 0 ? { entries } : null;
  };

  /** Builds (once per set of minute files) and caches the hour's tar.bz2 in a private temp dir. */
  const builtHour = (hour: string, entries: TarEntry[]): Promise<{ path: string; size: number }> => {
    const key = `${hour}|${entries.map((e) => `${e.name}:${e.size}:${e.mtimeMs}`).join(',')}`;
    let p = hourCache.get(key);
    if (!p) {
      p = (async () => {
        cacheDir ??= mkdtemp(join(tmpdir(), 'fake-gti-hourly-'));
        const out = join(await cacheDir, `${hour}-${hourCache.size}.tar.bz2`);
        await writeHourPackage(entries, out, findCompressor(o.compressor), (c) => {
          children.add(c);
          c.once('close', () => children.delete(c));
        });
        return { path: out, size: (await stat(out)).size };
      })();
      hourCache.set(key, p);
      p.catch(() => hourCache.delete(key));
    }
    return p;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const key = req.headers['x-apikey'];
    const xTool = req.headers['x-tool'];
    const entry: FakeGtiRequest = {
      method: req.method ?? 'GET',
      path,
      hadKey: typeof key === 'string',
      xTool: typeof xTool === 'string' ? xTool : undefined,
      status: 0,
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

  const route = async ({ req, res, url, key, entry, settle, reply, notFound }: Exchange): Promise<void> => {
    const path = entry.path;

    // The storage host: no key needed, the token is the credential.
    const dl = DOWNLOAD_RE.exec(path);
    if (dl) {
      const [, kind, id] = dl as unknown as [string, 'minute' | 'hour', string];
      const t = tokens.get(url.searchParams.get('token') ?? '');
      if (req.method !== 'GET' || !t || t.kind !== kind || t.id !== id)
        return reply(403, err('ForbiddenError', 'invalid or expired download token'));
      let file: { path: string; size: number } | null;
      if (kind === 'minute') file = await minuteFile(id);
      else {
        const src = await hourSource(id);
        file = src === null ? null : 'entries' in src ? await builtHour(id, src.entries) : src;
      }
      if (!file) return notFound(`batch ${id}`);
      const cutAt = faults.takeTruncate(id, file.size);
      settle(200);
      return sendFile(res, file.path, file.size, { bytesPerSecond: faults.slowFor(id), cutAt });
    }

    if (!path.startsWith('/api/v3/')) return notFound(`resource ${path}`);
    const isFeed = path.startsWith('/api/v3/feeds/');
    if (isFeed && faults.takeReset()) {
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
      const exists = kind === 'minute' ? (await minuteFile(id)) !== null : (await hourSource(id)) !== null;
      if (!exists) return notFound(`batch ${id}`);
      const token = randomBytes(12).toString('hex');
      tokens.set(token, { kind, id });
      settle(302);
      res.writeHead(302, { location: `${origin}/download/${kind}/${id}?token=${token}`, 'content-length': '0' });
      res.end();
      return;
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

  return {
    baseUrl: `${origin}/api/v3`,
    origin,
    requests,
    setFaults: (patch) => faults.set(patch),
    clearFaults: () => faults.clear(),
    get faults() {
      return faults.snapshot();
    },
    countFor: (pathPrefix, status) =>
      requests.filter((r) => r.path.startsWith(pathPrefix) && (status === undefined || r.status === status)).length,
    close: async () => {
      if (closed) return;
      closed = true;
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy(); // keep-alive and in-flight (slow) downloads
      for (const c of children) c.kill('SIGKILL');
      await done;
      await Promise.allSettled(hourCache.values());
      if (cacheDir) await rm(await cacheDir, { recursive: true, force: true });
    },
  };
}
