import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SandtrailError } from '../errors/index.js';
import { makeDirs } from '../files/index.js';

/** What a finished download left in the blob directory. */
export interface StoredBlob {
  path: string;
  size: number;
  sha256: string;
}

/**
 * A file-system failure of the blob directory as the store fault it is, naming the directory: a
 * full disk (STORE_FULL, retried later) or a directory that cannot be written (STORE_READONLY,
 * which stops the stage); anything else is returned as it is.
 */
export function blobDirFault(err: unknown, dir: string): unknown {
  const code = (err as { code?: string } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new SandtrailError(
      'STORE_FULL',
      `the artefact directory ${dir} is full (${code}): free space or move artefacts.dir`,
      { dir },
      { cause: err },
    );
  }
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'ENOTDIR') {
    return new SandtrailError(
      'STORE_READONLY',
      `the artefact directory ${dir} cannot be written (${code}): fix its permissions or artefacts.dir`,
      { dir },
      { cause: err },
    );
  }
  return err;
}

/** Creates the directory a blob goes to, its failures as blobDirFault says. */
export async function makeBlobDir(path: string): Promise<void> {
  try {
    await makeDirs(dirname(path));
  } catch (err) {
    throw blobDirFault(err, dirname(path));
  }
}

/** How a web page begins: what a proxy or a login page answers where a capture was expected. */
const WEB_PAGE = /^\s*<(!doctype|html|head|body|\?xml)/i;

/**
 * A temporary file this old is left by a process killed mid-download (kill -9, a host lost), not
 * by a download under way: a download's body is bounded by 20× gti.timeoutMs (20 min by default).
 */
const STALE_PART_MS = 3_600_000;

/** Removes the temporary files of `path` that killed downloads left (memory dumps run to GBs). */
async function removeStaleParts(path: string): Promise<void> {
  const dir = dirname(path);
  const prefix = `${basename(path)}.part-`;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(prefix))) {
    const file = join(dir, name);
    const mtimeMs = (await stat(file).catch(() => undefined))?.mtimeMs;
    if (mtimeMs !== undefined && Date.now() - mtimeMs > STALE_PART_MS) await rm(file, { force: true });
  }
}

/**
 * Streams a body to `path` through a temporary name in the same directory, renamed when complete:
 * a reader never sees a partial file, and a download cut or over its cap leaves nothing behind.
 * Never buffered whole: bytes are hashed and written as they arrive. Over `maxBytes` (advertised
 * or counted) is ARTEFACT_TOO_LARGE; a body shorter than advertised is the body's own error; an
 * empty one GTI_TRANSIENT; with `binary`, a web page GTI_BAD_RESPONSE; a full or unwritable disk is
 * the store fault blobDirFault names.
 */
export async function streamToBlob(
  body: AsyncIterable<Buffer>,
  advertised: number | null,
  path: string,
  maxBytes: number,
  what: string,
  o: { binary?: boolean } = {},
): Promise<StoredBlob> {
  if (advertised !== null && advertised > maxBytes) {
    throw new SandtrailError('ARTEFACT_TOO_LARGE', `${what} is ${advertised} bytes, over the ${maxBytes}-byte cap (artefacts.maxBytes)`);
  }
  await makeBlobDir(path);
  await removeStaleParts(path);
  const tmp = `${path}.part-${randomBytes(6).toString('hex')}`;
  const hash = createHash('sha256');
  let size = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done): void {
      // a binary artefact never starts with markup: a proxy's or a login page is no capture
      // (a web page's opening, not any leading '<': a capture's bytes may begin with one)
      if (size === 0 && o.binary && WEB_PAGE.test(chunk.subarray(0, 64).toString('latin1'))) {
        done(
          new SandtrailError(
            'GTI_BAD_RESPONSE',
            `${what}: the answer is a web page, where a binary file was expected (a proxy's or a login page?)`,
          ),
        );
        return;
      }
      size += chunk.length;
      if (size > maxBytes) {
        done(new SandtrailError('ARTEFACT_TOO_LARGE', `${what} passed the ${maxBytes}-byte cap (artefacts.maxBytes) while downloading`));
        return;
      }
      hash.update(chunk);
      done(null, chunk);
    },
    flush(done): void {
      // a 200 with no bytes is a transfer gone wrong, not an empty artefact: asked again, never kept
      done(size === 0 ? new SandtrailError('GTI_TRANSIENT', `${what}: the answer had no bytes, where an artefact was expected`) : null);
    },
  });
  const out = createWriteStream(tmp, { flags: 'wx' });
  try {
    // one pipeline: an error on either side (the body cut, the disk full) ends both, and is awaited
    await pipeline(Readable.from(body), counted, out);
    await rename(tmp, path);
    return { path, size, sha256: hash.digest('hex') };
  } catch (err) {
    // the file may still be opening when the body fails: removed once its descriptor is closed
    if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
    await rm(tmp, { force: true });
    throw blobDirFault(err, dirname(path));
  }
}
