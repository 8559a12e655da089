import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import { SandtrailError } from '../errors/index.js';
import type { DocMeta, SinkDoc } from '../store/index.js';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/** First bytes of every chunk: the format name and version, so a stray payload is told apart. */
const MAGIC = 'sandtrail-chunk/2\n';

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
export async function encodeChunk(docs: readonly SinkDoc[]): Promise<Buffer> {
  const text = `${MAGIC}${JSON.stringify(docs.map((d) => d.meta))}\n${docs.map((d) => d.json).join('\n')}`;
  const raw = Buffer.from(text);
  return compress(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length } });
}

/** Inverse of encodeChunk. A payload that does not decode is a permanent CHUNK_CORRUPT error. */
export async function decodeChunk(payload: Buffer): Promise<SinkDoc[]> {
  let text: string;
  try {
    text = (await decompress(payload)).toString('utf8');
  } catch (err) {
    throw new SandtrailError('CHUNK_CORRUPT', `index chunk cannot be decoded: ${(err as Error).message}`);
  }
  if (!text.startsWith(MAGIC)) throw new SandtrailError('CHUNK_CORRUPT', 'index chunk has no sandtrail-chunk/2 header');
  const metaEnd = text.indexOf('\n', MAGIC.length);
  let metas: DocMeta[];
  try {
    metas = JSON.parse(text.slice(MAGIC.length, metaEnd < 0 ? text.length : metaEnd)) as DocMeta[];
  } catch (err) {
    throw new SandtrailError('CHUNK_CORRUPT', `index chunk meta cannot be read: ${(err as Error).message}`);
  }
  const docs: SinkDoc[] = new Array<SinkDoc>(metas.length);
  let at = metaEnd + 1;
  for (let i = 0; i < metas.length; i++) {
    const end = i === metas.length - 1 ? text.length : text.indexOf('\n', at);
    if (metaEnd < 0 || end < 0)
      throw new SandtrailError('CHUNK_CORRUPT', `index chunk holds fewer documents than its ${metas.length} metas`);
    docs[i] = { meta: metas[i] as DocMeta, json: text.slice(at, end) };
    at = end + 1;
  }
  return docs;
}
