import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeGtiRequest } from '../fakeGti.js';
import { sendBytes } from './sendFile.js';

/** The upstream error body. */
export type ErrorBody = { error: { code: string; message?: string } };

export const apiError = (code: string, message: string): ErrorBody => ({ error: { code, message } });

/** One request being answered. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** The request URL, parsed against a dummy origin: use its path and query only. */
  url: URL;
  key: string | string[] | undefined;
  entry: FakeGtiRequest;
  /** Records the status (and reports the request) without writing anything. */
  settle(status: number): void;
  /** A JSON answer. */
  reply(status: number, body: unknown, headers?: Record<string, string>): void;
  notFound(what: string): void;
}

/** A 302 to `location` (an empty body). */
export function redirect(ex: Exchange, location: string): void {
  ex.settle(302);
  ex.res.writeHead(302, { location, 'content-length': '0' });
  ex.res.end();
}

/** A 200 JSON answer that advertises its full length, sends half of it and resets the connection. */
export function replyCutMidBody(ex: Exchange, body: unknown): Promise<void> {
  const bytes = Buffer.from(JSON.stringify(body));
  ex.settle(200);
  return sendBytes(ex.res, bytes, { cutAt: Math.floor(bytes.length / 2), contentType: 'application/json' });
}
