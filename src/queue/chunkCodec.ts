import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import { SandtrailError } from '../errors/index.js';
import type { BehaviourDoc } from '../normalize/index.js';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * Brotli at quality 1 compresses these JSON chunks about 3x at ~300 MB/s, on the libuv
 * thread pool, so the feed worker keeps decoding while chunks are compressed.
 */
export async function encodeChunk(docs: readonly BehaviourDoc[]): Promise<string> {
  const json = Buffer.from(JSON.stringify(docs));
  const packed = await compress(json, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_SIZE_HINT]: json.length },
  });
  return packed.toString('base64');
}

/** Inverse of encodeChunk; a corrupt payload is a permanent CHUNK_CORRUPT error. */
export async function decodeChunk(payload: string): Promise<BehaviourDoc[]> {
  try {
    const json = await decompress(Buffer.from(payload, 'base64'));
    const docs = JSON.parse(json.toString('utf8')) as unknown;
    if (!Array.isArray(docs)) throw new Error('payload is not an array');
    return docs as BehaviourDoc[];
  } catch (err) {
    throw new SandtrailError('CHUNK_CORRUPT', `index chunk cannot be decoded: ${(err as Error).message}`);
  }
}
