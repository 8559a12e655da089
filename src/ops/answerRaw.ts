import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Writes a whole HTTP/1.1 answer with a JSON body on a socket Node hands over raw (a request it
 * could not parse, a CONNECT, which never reaches the router) and closes the connection: nothing
 * more on it is read.
 */
export function answerRaw(socket: Duplex, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const text = JSON.stringify(body);
  if (socket.writable) {
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${extra}Content-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}

/** The status and words of a request Node could not parse: not received in time, headers too large, or malformed. */
export function clientErrorStatus(err: NodeJS.ErrnoException): { status: number; message: string } {
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message = status === 408 ? 'request not received in time' : status === 431 ? 'request headers too large' : 'malformed request';
  return { status, message };
}
