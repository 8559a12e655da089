import { isUtf8 } from 'node:buffer';
import { createHash, type Hash } from 'node:crypto';

/** One line of a batch: its text, or why it could not be read as text. */
export type FeedLine =
  | { kind: 'text'; lineNo: number; text: string }
  | { kind: 'oversize'; lineNo: number; size: number; prefix: Buffer; sha256: string }
  | { kind: 'invalid_utf8'; lineNo: number; size: number; raw: Buffer; sha256: string };

export interface ReadLinesOptions {
  /** Lines longer than this (bytes, without the newline) are not decoded, only measured. */
  maxLineBytes: number;
  /** How many leading bytes of an oversize or non-UTF-8 line are kept for the dead-letter entry. */
  prefixBytes: number;
}

const NL = 0x0a;

/**
 * Splits a byte stream into lines without ever holding more than one line (bounded by
 * `maxLineBytes`) plus one input chunk. Blank lines are skipped but still counted, so line
 * numbers match `sed -n Np` on the decoded file. A trailing `\r` is dropped.
 */
export async function* readLines(chunks: AsyncIterable<Buffer>, opts: ReadLinesOptions): AsyncGenerator<FeedLine> {
  let parts: Buffer[] = [];
  let partBytes = 0;
  let oversize = false;
  // the whole oversize line is hashed as it streams past, so its dead letter can name it exactly
  let hash: Hash | undefined;
  let lineNo = 0;

  const finish = (tail: Buffer | undefined): FeedLine | undefined => {
    lineNo += 1;
    if (oversize) {
      const size = partBytes + (tail?.length ?? 0);
      const prefix = Buffer.concat(parts).subarray(0, opts.prefixBytes);
      const sha256 = (hash as Hash).digest('hex');
      parts = [];
      partBytes = 0;
      oversize = false;
      hash = undefined;
      return { kind: 'oversize', lineNo, size, prefix: Buffer.from(prefix), sha256 };
    }
    const buf = parts.length === 0 ? (tail ?? Buffer.alloc(0)) : Buffer.concat(tail ? [...parts, tail] : parts);
    parts = [];
    partBytes = 0;
    return lineOf(buf, lineNo, opts);
  };

  for await (const chunk of chunks) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NL, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      start = nl + 1;
      let line: FeedLine | undefined;
      if (oversize) {
        account(piece, true);
        line = finish(undefined);
      } else if (partBytes + piece.length > opts.maxLineBytes) {
        markOversize(piece);
        line = finish(undefined);
      } else {
        line = finish(piece);
      }
      if (line) yield line;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      if (!oversize && partBytes + rest.length > opts.maxLineBytes) markOversize(rest);
      else if (oversize) account(rest);
      else {
        // copy: the source chunk may be a view into a pooled buffer reused by the producer
        parts.push(Buffer.from(rest));
        partBytes += rest.length;
      }
    }
  }
  if (partBytes > 0 || oversize) {
    const line = finish(undefined);
    if (line) yield line;
  }

  // Once over the cap, only the prefix is kept; later bytes are counted and dropped.
  function markOversize(piece: Buffer): void {
    hash = createHash('sha256');
    for (const p of parts) hash.update(p);
    hash.update(piece);
    const kept = Buffer.concat(parts).subarray(0, opts.prefixBytes);
    const need = Math.max(0, opts.prefixBytes - kept.length);
    parts = [Buffer.from(kept), Buffer.from(piece.subarray(0, need))];
    partBytes += piece.length;
    oversize = true;
  }
  function account(piece: Buffer, isLineEnd = false): void {
    // the line's trailing CR is not part of it, as in lineOf
    const body = isLineEnd && piece.length > 0 && piece[piece.length - 1] === 0x0d ? piece.subarray(0, piece.length - 1) : piece;
    partBytes += body.length;
    hash?.update(body);
  }
}

function lineOf(buf: Buffer, lineNo: number, opts: ReadLinesOptions): FeedLine | undefined {
  let end = buf.length;
  if (end > 0 && buf[end - 1] === 0x0d) end -= 1;
  const body = end === buf.length ? buf : buf.subarray(0, end);
  if (isBlank(body)) return undefined;
  if (!isUtf8(body)) {
    const sha256 = createHash('sha256').update(body).digest('hex');
    return { kind: 'invalid_utf8', lineNo, size: body.length, raw: Buffer.from(body.subarray(0, opts.prefixBytes)), sha256 };
  }
  return { kind: 'text', lineNo, text: body.toString('utf8') };
}

function isBlank(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}
