import { promisify } from 'node:util';
import { brotliCompress, brotliDecompressSync, constants } from 'node:zlib';
import { SandtrailError } from '../errors/index.js';
import type { DocMeta, SinkDoc } from './SinkDoc.js';

const compress = promisify(brotliCompress);

/** First bytes of every chunk: the format name and version, so a stray payload is told apart. */
const MAGIC = 'sandtrail-chunk/2\n';
const MAGIC_BYTES = Buffer.from(MAGIC);
const NL = 0x0a;
const NL_BYTES = Buffer.from('\n');
/**
 * Output buffer of one zlib step. zlib's default (16 KiB) makes compressing a 4 MB chunk on the
 * thread pool 250 hand-offs to the main thread; 1 MiB makes it 4. Decompression, on the calling
 * thread, only saves the steps (5-15% of its CPU).
 */
const ZLIB_CHUNK_BYTES = 1024 * 1024;

/**
 * A chunk is, brotli-compressed (quality 1: about 18% of the JSON at ~430 MB/s on the benchmark
 * feed, on the libuv thread pool so the stage goes on meanwhile):
 *
 *   sandtrail-chunk/2
 *   [meta of document 1, meta of document 2, ...]      one JSON line: ids, dates, pivots, depths
 *   {document 1}                                       each document's canonical JSON, one a line
 *   {document 2}
 *
 * The index stage reads the small meta line and hands every document's text to the store as it
 * is, so no document is parsed or serialized again after the feed stage (JSON.stringify never
 * emits a raw newline). Binary: it travels in a Redis key of its own, not base64 in job data.
 */
export async function encodeChunk(docs: readonly SinkDoc[]): Promise<EncodedChunk> {
  const parts: Buffer[] = [MAGIC_BYTES, Buffer.from(JSON.stringify(docs.map((d) => d.meta)))];
  for (const d of docs) parts.push(NL_BYTES, typeof d.json === 'string' ? Buffer.from(d.json) : d.json);
  const raw = Buffer.concat(parts);
  const payload = await compress(raw, {
    chunkSize: ZLIB_CHUNK_BYTES,
    params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
  });
  return { payload, rawBytes: raw.length };
}

/** A compressed chunk and the size it decodes to (the decoder's cap: see decodeChunk). */
export interface EncodedChunk {
  payload: Buffer;
  rawBytes: number;
}

/**
 * Inverse of encodeChunk. Each document's JSON stays the UTF-8 bytes it was in the chunk (a view,
 * not a copy). A payload that does not decode is a permanent CHUNK_CORRUPT error, and so is one
 * that decodes to more than `maxBytes`: the output is cut there, so a forged payload of a few KB
 * (Redis is writable by whoever reaches it) cannot make the worker allocate gigabytes.
 *
 * Decompressed on the calling thread (~10 ms for a 4 MB chunk): on the thread pool the same work
 * left the index worker 65 MB larger at its peak on a 1 GB minute (290 against 357 MB), most
 * likely in the allocator's per-thread arenas, for no gain in speed.
 */
export async function decodeChunk(payload: Buffer, maxBytes: number): Promise<SinkDoc[]> {
  let raw: Buffer;
  try {
    raw = brotliDecompressSync(payload, { chunkSize: ZLIB_CHUNK_BYTES, maxOutputLength: maxBytes });
  } catch (err) {
    const tooLarge = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
    throw new SandtrailError(
      'CHUNK_CORRUPT',
      tooLarge
        ? `index chunk decodes to more than the ${maxBytes} bytes it was written with: not a chunk this pipeline wrote`
        : `index chunk cannot be decoded: ${(err as Error).message}`,
    );
  }
  if (raw.length < MAGIC_BYTES.length || !raw.subarray(0, MAGIC_BYTES.length).equals(MAGIC_BYTES)) {
    throw new SandtrailError('CHUNK_CORRUPT', 'index chunk has no sandtrail-chunk/2 header');
  }
  const metaEnd = raw.indexOf(NL, MAGIC_BYTES.length);
  let metas: DocMeta[];
  try {
    metas = JSON.parse(raw.toString('utf8', MAGIC_BYTES.length, metaEnd < 0 ? raw.length : metaEnd)) as DocMeta[];
  } catch (err) {
    throw new SandtrailError('CHUNK_CORRUPT', `index chunk meta cannot be read: ${(err as Error).message}`);
  }
  const docs: SinkDoc[] = new Array<SinkDoc>(metas.length);
  let at = metaEnd + 1;
  for (let i = 0; i < metas.length; i++) {
    const end = i === metas.length - 1 ? raw.length : raw.indexOf(NL, at);
    if (metaEnd < 0 || end < 0)
      throw new SandtrailError('CHUNK_CORRUPT', `index chunk holds fewer documents than its ${metas.length} metas`);
    docs[i] = { meta: metas[i] as DocMeta, json: raw.subarray(at, end) };
    at = end + 1;
  }
  return docs;
}
