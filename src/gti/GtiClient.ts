import { SandtrailError } from '../errors/index.js';
import { answerSignal, bounded } from './answerSignal.js';
import { codeFor, downloadRefused, failure, isGone, networkError } from './gtiErrors.js';

export interface GtiClientOptions {
  baseUrl: string;
  apiKey: string;
  xTool?: string;
  timeoutMs: number;
  /**
   * Called once per request the service answered (its status line arrived, whatever the status), for
   * the quota ledger: the service charges a request when it answers it, so a body cut afterwards
   * does not undo the call, and the request sent again to get the whole body is another call.
   */
  onCall?: (call: { method: string; path: string; status: number }) => Promise<void>;
  /**
   * Called instead of `onCall` when a request that `beforeCall` let through got no answer at all
   * (refused or reset connection, timeout before the status line): nothing was charged, so a
   * reservation made in `beforeCall` is given back here.
   */
  onNoAnswer?: (call: { method: string; path: string }) => void | Promise<void>;
  /**
   * Awaited before every request; throwing (e.g. BUDGET_EXCEEDED) prevents it. Rate limits and
   * budgets hook in here (feed reads and feed links, which cost nothing, are told apart by path).
   */
  beforeCall?: (call: { method: string; path: string }) => void | Promise<void>;
  /** Read as each request starts: aborting it ends the request before its answer (onNoAnswer then). */
  stopSignal?: () => AbortSignal;
}

/** Redirects followed for one API request before it is refused. */
const MAX_REDIRECTS = 5;

/**
 * The one HTTP client for the GTI API: `x-apikey` and `x-tool` headers, a timeout per request,
 * typed errors with the upstream code, and a hook that records every call in the quota ledger.
 * The key is never part of an error message or a log field.
 */
export class GtiClient {
  private readonly base: string;

  constructor(private readonly o: GtiClientOptions) {
    this.base = o.baseUrl.replace(/\/+$/, '');
  }

  /**
   * GETs a file the API answers with a redirect (feed batches): the redirect is followed by hand
   * so the storage host never receives the API key. Returns the body stream, or null on 404.
   */
  async openDownload(path: string, signal?: AbortSignal): Promise<{ body: AsyncIterable<Buffer>; bytes: number | null } | null> {
    let res: Response;
    try {
      // an artefact the endpoint serves itself streams under the download's time, not an API call's
      res = await this.request('GET', path, 'manual', signal, this.o.timeoutMs * 20);
    } catch (err) {
      if ((err as { code?: string }).code === 'GTI_NOT_FOUND') return null;
      throw err;
    }
    if (res.status >= 300 && res.status < 400) {
      const location = res.headers.get('location');
      // a broken answer, asked once more as any bad answer is (it was retried as a 5xx, each try a paid call)
      if (!location) throw new SandtrailError('GTI_BAD_RESPONSE', `GET ${path}: ${res.status} without a Location`);
      const target = new URL(location, `${this.base}${path}`).toString();
      try {
        // the storage host answers within a call's time, then streams within a download's
        const exchange = answerSignal(signal, this.o.timeoutMs, this.o.timeoutMs * 20);
        res = await fetch(target, { signal: exchange.signal });
        exchange.began();
      } catch (err) {
        throw networkError(err, `download of ${path}: ${failure(err, this.o.timeoutMs)}`);
      }
      if (isGone(res.status)) return null;
      if (!res.ok) {
        const refused = downloadRefused(res, `download of ${path}`);
        // a feed batch's signed link refused (expired on the way): the API gives a new one when asked
        // again, at no cost, so the minute is retried like a cut download, not failed at once
        if (refused.code === 'GTI_FORBIDDEN' && path.startsWith('/feeds/')) {
          throw new SandtrailError(
            'GTI_TRANSIENT',
            `download of ${path}: the storage host refused the link the API gave (${res.status}): asked again for a new one`,
            { status: res.status },
          );
        }
        throw refused;
      }
    }
    if (!res.body) throw new SandtrailError('GTI_TRANSIENT', `GET ${path}: empty body`);
    const length = contentLength(res);
    return {
      body: bodyChunks(res.body, path, length),
      bytes: length,
    };
  }

  /**
   * GETs a JSON document at a path relative to the versioned base (e.g. `/users/me/overall_quotas`).
   * A body cut short throws GTI_NETWORK and one that is not JSON GTI_BAD_RESPONSE, both retryable
   * by callWithRetry like a cut page.
   */
  async getJson(path: string, signal?: AbortSignal): Promise<unknown> {
    const res = await this.request('GET', path, 'follow', signal);
    if (!res.body) throw new SandtrailError('GTI_BAD_RESPONSE', `GET ${path}: empty body`);
    const length = contentLength(res);
    const parts: Buffer[] = [];
    for await (const chunk of bodyChunks(res.body, path, length)) parts.push(chunk);
    try {
      return JSON.parse(Buffer.concat(parts).toString('utf8')) as unknown;
    } catch (err) {
      throw new SandtrailError('GTI_BAD_RESPONSE', `GET ${path}: the answer is not JSON: ${(err as Error).message}`);
    }
  }

  /**
   * GETs a JSON answer as a byte stream (for readCollection), so a page of large reports is
   * parsed while it arrives. A body cut short of its content-length throws GTI_NETWORK.
   */
  async openJson(path: string, signal?: AbortSignal): Promise<AsyncIterable<Buffer>> {
    const res = await this.request('GET', path, 'follow', signal);
    if (!res.body) throw new SandtrailError('GTI_BAD_RESPONSE', `GET ${path}: empty body`);
    const length = contentLength(res);
    return bodyChunks(res.body, path, length);
  }

  /**
   * Opens a link: a path under the API base, or a full URL. The API key goes only to the API's
   * own origin; a link on any other host (a storage host, a feed link elsewhere) is fetched
   * without it, and so is every redirect target.
   */
  async openLink(
    link: string,
    signal?: AbortSignal,
    /** How a link on another host is named to the hooks (it has no API path of its own). */
    as = '/feeds/file_behaviours/{token}/link',
  ): Promise<{ body: AsyncIterable<Buffer>; bytes: number | null } | null> {
    const path = this.pathOf(link);
    if (path !== null) return this.openDownload(path, signal);
    await this.o.beforeCall?.({ method: 'GET', path: as });
    let res: Response;
    try {
      const exchange = answerSignal(signal, this.o.timeoutMs, this.o.timeoutMs * 20);
      res = await fetch(link, { redirect: 'follow', signal: exchange.signal });
      exchange.began();
    } catch (err) {
      await this.o.onNoAnswer?.({ method: 'GET', path: as });
      throw networkError(err, `download of ${redactLink(link)}: ${failure(err, this.o.timeoutMs)}`);
    }
    // a download through a feed link is a call like any other: on the ledger (at 0 units, rule 3)
    await this.o.onCall?.({ method: 'GET', path: as, status: res.status });
    if (isGone(res.status)) return null;
    if (!res.ok) throw downloadRefused(res, `download of ${redactLink(link)}`);
    if (!res.body) throw new SandtrailError('GTI_TRANSIENT', `download of ${redactLink(link)}: empty body`);
    const length = contentLength(res);
    return {
      body: bodyChunks(res.body, redactLink(link), length),
      bytes: length,
    };
  }

  /** The path of a link under the API base (same origin and base path), or null for a foreign link. */
  pathOf(link: string): string | null {
    if (link.startsWith('/')) return link;
    let url: URL;
    let base: URL;
    try {
      url = new URL(link);
      base = new URL(this.base);
    } catch {
      return null;
    }
    if (url.origin !== base.origin || !url.pathname.startsWith(`${base.pathname}/`)) return null;
    return url.pathname.slice(base.pathname.length) + url.search;
  }

  /**
   * Follows an API answer's redirects (at most MAX_REDIRECTS): the key and x-tool go only to the
   * API's own origin, where each hop is another call for the ledger; any other host gets neither.
   */
  private async followRedirects(
    first: Response,
    method: string,
    path: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
  ): Promise<Response> {
    let res = first;
    let url = new URL(`${this.base}${path}`);
    const origin = new URL(this.base).origin;
    for (let hops = 0; isRedirect(res.status); hops++) {
      const location = res.headers.get('location');
      if (!location) return res;
      if (hops >= MAX_REDIRECTS) throw new SandtrailError('GTI_BAD_RESPONSE', `${method} ${path}: more than ${MAX_REDIRECTS} redirects`);
      await res.body?.cancel().catch(() => undefined);
      url = new URL(location, url);
      const own = url.origin === origin ? this.pathOf(url.toString()) : null;
      const hop = { method: res.status === 303 ? 'GET' : method, path: own ?? `${url.origin} (redirect of ${path})` };
      if (own !== null) await this.o.beforeCall?.(hop);
      try {
        res = await fetch(url, {
          method: hop.method,
          headers: own !== null ? headers : { accept: headers.accept as string },
          redirect: 'manual',
          signal: bounded(signal, this.o.timeoutMs),
        });
      } catch (err) {
        if (own !== null) await this.o.onNoAnswer?.(hop);
        throw new SandtrailError('GTI_NETWORK', `${method} ${path} (redirected to ${url.origin}): ${failure(err, this.o.timeoutMs)}`);
      }
      if (own !== null) await this.o.onCall?.({ ...hop, status: res.status });
    }
    return res;
  }

  private async request(
    method: string,
    path: string,
    redirect: 'follow' | 'manual' = 'follow',
    signal?: AbortSignal,
    /** How long the body may take to read once the answer began (a download: 20× an API call's); unset, the same as its headers. */
    bodyTimeoutMs?: number,
  ): Promise<Response> {
    const timeoutMs = this.o.timeoutMs;
    await this.o.beforeCall?.({ method, path });
    const headers: Record<string, string> = { 'x-apikey': this.o.apiKey, accept: 'application/json' };
    if (this.o.xTool) headers['x-tool'] = this.o.xTool;
    let res: Response;
    try {
      // redirects by hand: fetch would send the key on to whatever host a Location names
      const stop = this.o.stopSignal?.();
      const exchange = answerSignal(stop ? (signal ? AbortSignal.any([signal, stop]) : stop) : signal, timeoutMs, bodyTimeoutMs);
      res = await fetch(`${this.base}${path}`, { method, headers, redirect: 'manual', signal: exchange.signal });
      exchange.began();
    } catch (err) {
      await this.o.onNoAnswer?.({ method, path });
      throw new SandtrailError('GTI_NETWORK', `${method} ${path}: ${failure(err, timeoutMs)}`);
    }
    await this.o.onCall?.({ method, path, status: res.status });
    if (redirect === 'follow') res = await this.followRedirects(res, method, path, headers, signal);
    if (res.ok || (redirect === 'manual' && isRedirect(res.status))) return res;
    let upstream: { code?: string; message?: string } = {};
    try {
      upstream = ((await res.json()) as { error?: typeof upstream }).error ?? {};
    } catch {
      // not JSON: the status decides
    }
    const code = codeFor(res.status, upstream.code);
    const hint = code === 'GTI_AUTH' ? ' (check GTI_APIKEY)' : '';
    throw new SandtrailError(code, `${method} ${path}: ${res.status} ${upstream.code ?? ''} ${upstream.message ?? ''}`.trim() + hint, {
      status: res.status,
      upstreamCode: upstream.code,
      retryAfterS: Number(res.headers.get('retry-after')) || undefined,
    });
  }
}

/**
 * The size an answer announces; null when it announces none (a chunked body: `Number(null)` would
 * read as 0, and a minute sent so as an empty file).
 */
function contentLength(res: Response): number | null {
  const header = res.headers.get('content-length');
  const n = header === null || header.trim() === '' ? Number.NaN : Number(header);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** Redirect statuses fetch would follow. */
function isRedirect(status: number): boolean {
  return [301, 302, 303, 307, 308].includes(status);
}

/** A link without its query string (signed download URLs carry their token there). */
function redactLink(link: string): string {
  return link.split('?')[0] ?? link;
}

/**
 * Streams a response body as Buffers; a body shorter than its content-length (a connection cut
 * mid-download) is an error, never a silently short batch.
 */
async function* bodyChunks(body: ReadableStream<Uint8Array>, path: string, expected: number | null): AsyncGenerator<Buffer> {
  let got = 0;
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      got += chunk.byteLength;
      yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
  } catch (err) {
    throw new SandtrailError('GTI_NETWORK', `download of ${path} interrupted after ${got} bytes: ${(err as Error).message}`);
  }
  if (expected !== null && got < expected) {
    throw new SandtrailError('GTI_NETWORK', `download of ${path} truncated: ${got} of ${expected} bytes`);
  }
}
