import { createReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface SendFileOptions {
  /** Throttle to this many bytes per second. */
  bytesPerSecond?: number | null;
  /** Send only this many bytes, then destroy the socket (the full size is still advertised). */
  cutAt?: number | null;
  /** Default `application/octet-stream`. */
  contentType?: string;
  /** Announce no content-length (the body goes out chunked). */
  chunked?: boolean;
}

/** Writes one chunk and resolves once it is handed to the socket (false when the connection went away). */
function writeFlushed(res: ServerResponse, chunk: Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve(false);
    const onClose = (): void => resolve(false);
    res.once('close', onClose);
    res.write(chunk, (err) => {
      res.off('close', onClose);
      resolve(!err);
    });
  });
}

/**
 * Streams `size` bytes of `file` as a 200 with content-length (unless `chunked`), verbatim; optionally throttled, or
 * cut short and followed by a connection reset (a download dying midway).
 */
export function sendFile(res: ServerResponse, file: string, size: number, o: SendFileOptions = {}): Promise<void> {
  return sendBody(res, size, o, (limit) => createReadStream(file, { start: 0, end: limit - 1, highWaterMark: 64 * 1024 }));
}

/** {@link sendFile} for bytes held in memory. */
export function sendBytes(res: ServerResponse, bytes: Buffer, o: SendFileOptions = {}): Promise<void> {
  return sendBody(res, bytes.length, o, (limit) => [bytes.subarray(0, limit)]);
}

type Source = Iterable<Buffer> | (AsyncIterable<Buffer> & { destroy(): void });

async function sendBody(res: ServerResponse, size: number, o: SendFileOptions, open: (limit: number) => Source): Promise<void> {
  res.writeHead(200, {
    'content-type': o.contentType ?? 'application/octet-stream',
    ...(o.chunked ? {} : { 'content-length': String(size) }),
  });
  const limit = o.cutAt ?? size;
  const bps = o.bytesPerSecond ?? null;
  // Throttled bodies go out in ~50 ms slices so the pace is smooth.
  const slice = bps ? Math.max(1, Math.floor(bps / 20)) : Number.POSITIVE_INFINITY;
  const t0 = Date.now();
  let sent = 0;
  if (limit > 0) {
    const stream = open(limit);
    try {
      for await (const chunk of stream) {
        for (let off = 0; off < chunk.length;) {
          const part = chunk.subarray(off, off + Math.min(slice, chunk.length - off));
          off += part.length;
          if (!(await writeFlushed(res, part))) return;
          sent += part.length;
          if (bps) {
            const wait = t0 + (sent / bps) * 1000 - Date.now();
            if (wait > 0) await sleep(wait);
          }
        }
      }
    } finally {
      if ('destroy' in stream) stream.destroy();
    }
  }
  if (o.cutAt !== null && o.cutAt !== undefined) {
    if (sent === 0) res.flushHeaders();
    await sleep(20); // let what was written leave before the reset
    res.socket?.destroy();
    return;
  }
  res.end();
}
