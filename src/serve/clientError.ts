import type { Socket } from 'node:net';
import { answerRaw, clientErrorStatus } from '../ops/index.js';
import { v3Error } from './envelope.js';

/**
 * Answers a request Node could not parse (a bad header, headers past 16 KB, one not sent in time)
 * in the API's error envelope, as Fastify's own handler would in its shape, then closes the
 * connection: after a parse error nothing more on it can be read.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = clientErrorStatus(err);
  answerRaw(socket, status, v3Error('BadRequestError', message));
}
