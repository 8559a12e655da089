import { promisify } from 'node:util';
import { brotliCompress, brotliDecompress, constants } from 'node:zlib';
import { SandtrailError } from '../errors/index.js';
import type { BehaviourDoc } from '../normalize/index.js';
import { withSerialized } from '../store/index.js';

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

/**
 * A chunk is JSON lines (one document per line, serialized once by the feed stage; JSON.stringify
 * never emits a raw newline),
 * brotli quality 1 (~3x at ~300 MB/s, on the libuv thread pool so decoding goes on), base64
 * because BullMQ stores job data as JSON.
 */
export async function encodeChunk(docs: readonly { json: string }[]): Promise<string> {
  const json = Buffer.from(docs.map((d) => d.json).join('\n'));
  const packed = await compress(json, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_SIZE_HINT]: json.length },
  });
  return packed.toString('base64');
}

/**
 * Inverse of encodeChunk. Each document keeps its JSON text so the sink stores it without
 * serializing again. A corrupt payload is a permanent CHUNK_CORRUPT error.
 */
export async function decodeChunk(payload: string): Promise<BehaviourDoc[]> {
  try {
    const text = (await decompress(Buffer.from(payload, 'base64'))).toString('utf8');
    return text.length === 0 ? [] : text.split('\n').map((line) => withSerialized(JSON.parse(line) as BehaviourDoc, line));
  } catch (err) {
    throw new SandtrailError('CHUNK_CORRUPT', `index chunk cannot be decoded: ${(err as Error).message}`);
  }
}
