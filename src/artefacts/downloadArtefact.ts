import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { SandtrailError } from '../errors/index.js';
import { makeDirs } from '../files/index.js';

/** What a finished download left in the blob directory. */
export interface StoredBlob {
  path: string;
  size: number;
  sha256: string;
}

/**
 * Streams a body to `path` through a temporary name in the same directory, renamed when complete:
 * a reader never sees a partial file, and a download cut or over its cap leaves nothing behind.
 * Never buffered whole: bytes are hashed and written as they arrive. Over `maxBytes` (advertised
 * or counted) is ARTEFACT_TOO_LARGE; a body shorter than advertised is the body's own error.
 */
export async function streamToBlob(
  body: AsyncIterable<Buffer>,
  advertised: number | null,
  path: string,
  maxBytes: number,
  what: string,
): Promise<StoredBlob> {
  if (advertised !== null && advertised > maxBytes) {
    throw new SandtrailError('ARTEFACT_TOO_LARGE', `${what} is ${advertised} bytes, over the ${maxBytes}-byte cap (artefacts.maxBytes)`);
  }
  await makeDirs(dirname(path));
  const tmp = `${path}.part-${randomBytes(6).toString('hex')}`;
  const out = createWriteStream(tmp, { flags: 'wx' });
  const hash = createHash('sha256');
  let size = 0;
  const closed = new Promise<void>((resolve, reject) => {
    out.once('close', resolve);
    out.once('error', reject);
  });
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > maxBytes) {
        throw new SandtrailError('ARTEFACT_TOO_LARGE', `${what} passed the ${maxBytes}-byte cap (artefacts.maxBytes) while downloading`);
      }
      hash.update(chunk);
      if (!out.write(chunk)) await new Promise<void>((r) => out.once('drain', r));
    }
    out.end();
    await closed;
    await rename(tmp, path);
    return { path, size, sha256: hash.digest('hex') };
  } catch (err) {
    out.destroy();
    await closed.catch(() => undefined);
    await rm(tmp, { force: true });
    throw err;
  }
}
