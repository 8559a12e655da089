import { extract } from 'tar-stream';
import { SandtrailError } from '../errors/index.js';

/** One regular file of a tar archive, held whole: hourly packages hold one compressed minute per entry. */
export interface TarEntry {
  name: string;
  data: Buffer;
}

/** An entry larger than this is refused rather than buffered (a minute batch compresses far below it). */
const MAX_ENTRY_BYTES = 1024 * 1024 * 1024;

/**
 * Streams the regular files of a tar archive (tar-stream: ustar, GNU and pax names) from decoded
 * bytes, one entry at a time; directories and metadata entries are skipped. Memory is one entry
 * plus what tar-stream buffers. A truncated or malformed archive is BATCH_CORRUPT (permanent);
 * an error of the input itself (a cut download) is rethrown as it is, so it stays retryable.
 */
export async function* readTar(chunks: AsyncIterable<Buffer>): AsyncGenerator<TarEntry> {
  const ex = extract();
  let inputError: Error | undefined;
  const feeding = (async () => {
    try {
      for await (const chunk of chunks) {
        if (!ex.write(chunk)) await new Promise<void>((r) => ex.once('drain', r));
      }
      ex.end(null);
    } catch (err) {
      inputError = err as Error;
      ex.destroy(err as Error);
    }
  })();
  try {
    for await (const entry of ex) {
      const { name, type, size } = entry.header;
      if (type !== 'file' || (size ?? 0) > MAX_ENTRY_BYTES) {
        if ((size ?? 0) > MAX_ENTRY_BYTES)
          throw new SandtrailError('BATCH_CORRUPT', `tar: entry ${name} is larger than ${MAX_ENTRY_BYTES} bytes`);
        entry.resume();
        continue;
      }
      const parts: Buffer[] = [];
      for await (const part of entry) parts.push(part as Buffer);
      yield { name, data: Buffer.concat(parts) };
    }
  } catch (err) {
    await feeding;
    if (inputError) throw inputError;
    if ((err as { code?: string }).code === 'BATCH_CORRUPT') throw err;
    throw new SandtrailError('BATCH_CORRUPT', `tar: ${(err as Error).message}`, {}, { cause: err });
  } finally {
    ex.destroy();
  }
  await feeding;
  if (inputError) throw inputError;
}
