import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { v3Error } from './envelope.js';

/**
 * Answers a request Node could not parse (a bad header, headers past 16 KB, one not sent in time)
 * in the API's error envelope, as Fastify's own handler would in its shape, then closes the
 * connection: after a parse error nothing more on it can be read.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message = status === 408 ? 'request not received in time' : status === 431 ? 'request headers too large' : 'malformed request';
  const body = JSON.stringify(v3Error('BadRequestError', message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
