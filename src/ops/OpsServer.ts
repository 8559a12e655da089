import type { Duplex } from 'node:stream';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/index.js';
import { messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { processMetrics } from '../metrics/index.js';
import type { Store } from '../store/index.js';
import { answerRaw, clientErrorStatus } from './answerRaw.js';
import { FailedAuth } from './FailedAuth.js';
import { assertSafeBinding, authorized, loopbackHostHeader } from './checkAccess.js';
import { sharedStateReader } from './sharedState.js';
import { withTimeout } from './withTimeout.js';

/** What /readyz asks; each check rejects (or times out) when not ready. */
export interface Readiness {
  redis(): Promise<unknown>;
  store(): Promise<unknown>;
  /** True once the process started draining (the first stop signal). */
  draining(): boolean;
}

export interface OpsServerOptions {
  config: Config;
  log: Logger;
  store: Store;
  /** Every queue of the pipeline, for the dashboard and the queue-depth gauges. */
  queues: readonly Queue[];
  readiness: Readiness;
  /** How wrong credentials are counted per address (default: 10 a minute, then 429 for the rest of it). */
  failedAuth?: FailedAuth;
}

export interface OpsServer {
  /** `http://host:port`. */
  url: string;
  close(): Promise<void>;
}

const CHECK_TIMEOUT_MS = 2000;
/** How long a dashboard request may wait on Redis before it is answered 503. */
const DASHBOARD_TIMEOUT_MS = 5000;
/** How long closing the server may take (its connections are cut at once; this bounds the rest). */
const CLOSE_TIMEOUT_MS = 2000;
/** The writable dashboard's actions are a few hundred bytes of JSON. */
const BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The HTTP side of a long-running process (Fastify): `/metrics` (Prometheus text, prom-client),
 * `/healthz` (alive), `/readyz` (Redis and store reachable, not draining; the reason when not),
 * and the BullMQ dashboard at `/queues` (bull-board, read-only unless http.dashboardWritable).
 * Every route but /healthz needs the configured token or basic-auth credentials; bound beyond
 * loopback without any, it refuses to start.
 */
export async function startOpsServer(o: OpsServerOptions): Promise<OpsServer> {
  const { http } = o.config;
  const creds = { token: http.token, username: http.username, password: http.password };
  assertSafeBinding(http.host, creds);
  // loaded here, not at start-up: commands without an HTTP side (backfill, lookup) skip ~170 files
  const [{ default: Fastify }, { createBullBoard }, { BullMQAdapter }, { FastifyAdapter }] = await Promise.all([
    import('fastify'),
    import('@bull-board/api'),
    import('@bull-board/api/bullMQAdapter'),
    import('@bull-board/fastify'),
  ]);
  // a stop cuts the connections still open: a client sending its headers a byte at a time, or
  // waiting on a dashboard request, must not hold a stopping process
  const app: FastifyInstance = Fastify({
    logger: false,
    forceCloseConnections: true,
    // a request not received whole in time (a body sent a byte at a time) is answered 408 and cut,
    // looked for every second (Node's default, 30 s, would let it run that much longer)
    requestTimeout: http.requestTimeoutMs,
    http: { connectionsCheckingInterval: 1000 },
    // the only bodies taken are the writable dashboard's small JSON actions
    bodyLimit: BODY_LIMIT_BYTES,
    clientErrorHandler: (err, socket) => {
      if (err.code === 'ECONNRESET') return;
      const { status, message } = clientErrorStatus(err);
      answerRaw(socket, status, { error: message });
    },
  });
  // CONNECT never reaches the router: Node hands its socket to this listener (or closes it unanswered)
  app.server.on('connect', (_req, socket: Duplex) =>
    answerRaw(socket, 405, { error: 'CONNECT is not allowed here' }, { Allow: 'GET, HEAD' }),
  );
  // a body this server will not read is not waited for: answered at once, its connection closed
  app.addHook('onRequest', async (req, reply) => {
    const takesBody = http.dashboardWritable && req.url.startsWith('/queues/api/');
    if (req.method === 'GET' || req.method === 'HEAD' || takesBody) return;
    await reply
      .code(405)
      .header('allow', 'GET, HEAD')
      .header('connection', 'close')
      .send({ error: `${req.method} is not allowed here` });
  });
  const failedAuth = o.failedAuth ?? new FailedAuth();
  const metrics = processMetrics();
  metrics.readShared(sharedStateReader(o.queues, o.store));

  app.addHook('onRequest', async (req, reply) => {
    if (req.url.split('?')[0] === '/healthz') return;
    const open = !creds.token && !(creds.username && creds.password);
    if (open && !loopbackHostHeader(req.headers.host)) {
      // keyless means loopback only: another host name is a web page reaching it through DNS rebinding
      await reply
        .code(403)
        .header('connection', 'close')
        .send({ error: 'without http.token or credentials only requests to localhost are answered' });
      return;
    }
    // an address that sent too many wrong credentials is held off, whatever it sends now
    const held = Math.ceil(failedAuth.heldFor(req.ip) / 1000);
    if (held > 0) {
      await reply
        .code(429)
        .header('retry-after', String(held))
        .header('connection', 'close')
        .send({ error: `too many wrong credentials from this address: try again in ${held} s` });
      return;
    }
    if (authorized(req.headers.authorization, creds)) return;
    if (req.headers.authorization !== undefined && failedAuth.failed(req.ip))
      o.log.warn(
        { address: req.ip, failures: failedAuth.limit, windowS: failedAuth.windowMs / 1000 },
        'repeated wrong credentials from one address: its requests are refused (429) until the window ends',
      );
    const challenge = creds.token ? 'Bearer realm="sandtrail"' : 'Basic realm="sandtrail"';
    // refused before its body is read: the connection goes with the answer, whatever the client still sends
    await reply.code(401).header('www-authenticate', challenge).header('connection', 'close').send({ error: 'credentials required' });
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, string> = {};
    const probe = async (name: string, fn: () => Promise<unknown>): Promise<void> => {
      try {
        await withTimeout(fn(), CHECK_TIMEOUT_MS);
        checks[name] = 'ok';
      } catch (err) {
        checks[name] = messageOf(err);
      }
    };
    await Promise.all([probe('redis', o.readiness.redis), probe('store', o.readiness.store)]);
    checks.draining = o.readiness.draining() ? 'not taking new jobs' : 'ok';
    const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
    const ready = failing.length === 0;
    return reply
      .code(ready ? 200 : 503)
      .send({ ready, checks, ...(ready ? {} : { reason: failing.map(([k, v]) => `${k}: ${v}`).join('; ') }) });
  });
  app.get('/metrics', async (_req, reply) => {
    const text = await metrics.text();
    return reply.header('content-type', metrics.contentType).send(text);
  });

  // the dashboard's reads wait on Redis: one that does not answer is said in bounded time
  app.addHook('onRequest', async (req, reply) => {
    if (!req.url.startsWith('/queues/api/')) return;
    const timer = setTimeout(() => {
      if (!reply.sent) void reply.code(503).send({ error: `Redis did not answer within ${DASHBOARD_TIMEOUT_MS / 1000} s` });
    }, DASHBOARD_TIMEOUT_MS);
    reply.raw.once('close', () => clearTimeout(timer));
  });

  const board = new FastifyAdapter();
  board.setBasePath('/queues');
  createBullBoard({
    queues: o.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: !http.dashboardWritable, allowRetries: http.dashboardWritable })),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: `sandtrail (${o.config.queuePrefix})` } },
  });
  await app.register(board.registerPlugin() as never, { prefix: '/queues' });

  await app.listen({ port: http.port ?? 0, host: http.host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : http.port;
  const url = `http://${http.host.includes(':') ? `[${http.host}]` : http.host}:${port}`;
  o.log.info(
    { url, dashboard: `${url}/queues`, auth: creds.token ? 'bearer' : creds.username ? 'basic' : 'none' },
    'operations server listening',
  );
  let closing: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closing ??= (async () => {
        metrics.readShared(undefined);
        await withTimeout(app.close(), CLOSE_TIMEOUT_MS).catch((err: unknown) =>
          o.log.warn({ err: messageOf(err) }, 'the operations server did not close in time: left to the exit'),
        );
      })()),
  };
}
