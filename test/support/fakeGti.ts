import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeGtiOptions {
  apiKey: string;
  /** `overall_quotas` document per user id. */
  quotas?: Record<string, unknown>;
}

export interface FakeGti {
  baseUrl: string;
  /** Every request received: method, path and the headers that matter (the key itself is not kept). */
  requests: { method: string; path: string; hadKey: boolean; xTool: string | undefined }[];
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** A real HTTP server on loopback speaking the GTI API's contract for the paths under test. */
export async function startFakeGti(o: FakeGtiOptions): Promise<FakeGti> {
  const requests: FakeGti['requests'] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const key = req.headers['x-apikey'];
    const xTool = req.headers['x-tool'];
    requests.push({
      method: req.method ?? 'GET',
      path: url.pathname,
      hadKey: typeof key === 'string',
      xTool: typeof xTool === 'string' ? xTool : undefined,
    });
    if (typeof key !== 'string')
      return send(res, 401, { error: { code: 'AuthenticationRequiredError', message: 'X-Apikey header is missing' } });
    if (key !== o.apiKey) return send(res, 401, { error: { code: 'WrongCredentialsError', message: 'Wrong API key' } });
    const m = /^\/api\/v3\/users\/([^/]+)\/overall_quotas$/.exec(url.pathname);
    if (m && req.method === 'GET') {
      const doc = o.quotas?.[decodeURIComponent(m[1] as string)];
      return doc ? send(res, 200, { data: doc }) : send(res, 404, { error: { code: 'NotFoundError', message: 'user not found' } });
    }
    send(res, 404, { error: { code: 'NotFoundError', message: `${url.pathname} not found` } });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/api/v3`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
