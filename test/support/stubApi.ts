import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cleanup } from './env.js';

/** One answer of a stub API: a status and a body (JSON unless `type` says otherwise). */
export interface StubAnswer {
  status: number;
  body: unknown;
  type?: string;
}

/**
 * An API that answers each path as `route` says, for misbehaviours the fake GTI does not play (a
 * cursor that repeats, a 200 that is no JSON, a relationship gone): the requests per path are
 * counted. Unrouted paths answer 404 NotFoundError. Closed when the test ends.
 */
export async function startStubApi(
  route: (path: string) => StubAnswer | undefined,
): Promise<{ baseUrl: string; asked: (path: string) => number }> {
  const asked = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    asked.set(path, (asked.get(path) ?? 0) + 1);
    const a = route(path) ?? { status: 404, body: { error: { code: 'NotFoundError', message: `${path} not found` } } };
    const type = a.type ?? 'application/json';
    res.writeHead(a.status, { 'content-type': type });
    res.end(type === 'application/json' ? JSON.stringify(a.body) : String(a.body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v3`, asked: (path) => asked.get(path) ?? 0 };
}
