import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Logger } from '../log/index.js';
import { answerRaw, loopbackHostHeader, sameSecret, type FailedAuth } from '../ops/index.js';
import { isTaxiiUrl } from '../taxii/index.js';
import { v3Error, type V3ErrorCode } from './envelope.js';
import { API_CSP, HUNT_PAGE_CSP } from './huntPage.js';
import { ASSET_PATH } from './huntViews.js';

export interface GuardOptions {
  /** serve.apiKeys; none: loopback only. */
  keys: readonly string[];
  failedKeys: FailedAuth;
  log: Logger;
  fail: (reply: FastifyReply, code: V3ErrorCode, message: string) => FastifyReply;
}

/**
 * Who may read, and what a browser may do with what it reads: the keys (or, keyless, loopback
 * host names only), an address held off after too many wrong keys, the security headers of
 * every answer, and CONNECT answered like every other method.
 */
export function guardAccess(app: FastifyInstance, o: GuardOptions): void {
  const { keys, failedKeys, fail } = o;
  // CONNECT never reaches the router: Node hands its socket to this listener (or closes it unanswered)
  app.server.on('connect', (_req, socket: Duplex) =>
    answerRaw(socket, 405, v3Error('MethodNotAllowedError', 'CONNECT is not allowed here: this API only reads (GET)'), {
      Allow: 'GET, HEAD',
    }),
  );

  // what a browser may do with any answer: no sniffing JSON into HTML, no framing, no referrer
  // carrying a pivot value elsewhere; the page runs only its own script and style
  app.addHook('onSend', async (_req, reply, payload) => {
    const html = String(reply.getHeader('content-type') ?? '').startsWith('text/html');
    reply.header('content-security-policy', html ? HUNT_PAGE_CSP : API_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    return payload;
  });
  app.addHook('onRequest', async (req, reply) => {
    // keyless means loopback only: another host name is a web page reaching it through DNS rebinding
    if (keys.length === 0) {
      return loopbackHostHeader(req.headers.host)
        ? undefined
        : fail(reply, 'ForbiddenError', 'without serve.apiKeys only requests to localhost are answered');
    }
    // by the route matched, not the raw URL (`/%61pi/...` and absolute-form targets route to the API too):
    // only the hunting page itself and its charting library are open; the page's requests carry the key
    if (req.routeOptions.url === '/' || req.routeOptions.url?.startsWith(ASSET_PATH)) return;
    // TAXII clients (Sentinel, OpenCTI, taxii2-client) send a key as HTTP Basic's password
    const given = req.headers['x-apikey'] ?? basicPassword(req.headers.authorization);
    if (typeof given !== 'string' || given === '')
      return fail(
        reply,
        'AuthenticationRequiredError',
        isTaxiiUrl(req.url.split('?')[0] ?? '')
          ? 'credentials are missing: HTTP Basic with a key as the password'
          : 'X-Apikey header is missing',
      );
    // an address that sent too many wrong keys is held off, whatever it sends now
    const held = Math.ceil(failedKeys.heldFor(req.ip) / 1000);
    if (held > 0)
      return fail(
        reply.header('retry-after', String(held)),
        'TooManyRequestsError',
        `too many wrong API keys from this address: try again in ${held} s`,
      );
    if (!keys.some((k) => sameSecret(k, given))) {
      if (failedKeys.failed(req.ip))
        o.log.warn(
          { address: req.ip, failures: failedKeys.limit, windowS: failedKeys.windowMs / 1000 },
          'repeated wrong API keys from one address: its requests are refused (429) until the window ends',
        );
      return fail(reply, 'WrongCredentialsError', 'Wrong API key');
    }
  });
}

/** The password of an HTTP Basic `Authorization` header (any user name), or undefined. */
export function basicPassword(header: string | undefined): string | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}
