import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** One file to put in a package. */
export interface TarEntry {
  /** Name inside the archive (at most 100 bytes, ASCII). */
  name: string;
  path: string;
  size: number;
  mtimeMs: number;
}

function octal(buf: Buffer, offset: number, width: number, value: number): void {
  // width - 1 octal digits, NUL-terminated, as ustar writes numeric fields
  buf.write(value.toString(8).padStart(width - 1, '0') + '\0', offset, width, 'ascii');
}

/** The 512-byte ustar header of a regular file. */
export function ustarHeader(name: string, size: number, mtimeMs: number): Buffer {
  if (Buffer.byteLength(name) > 100) throw new RangeError(`tar entry name longer than 100 bytes: ${name}`);
  if (size >= 8 ** 11) throw new RangeError(`tar entry too big for ustar: ${size}`);
  const h = Buffer.alloc(512, 0);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, 0o644); // mode
  octal(h, 108, 8, 0); // uid
  octal(h, 116, 8, 0); // gid
  octal(h, 124, 12, size);
  octal(h, 136, 12, Math.floor(mtimeMs / 1000));
  h.write('        ', 148, 8, 'ascii'); // checksum placeholder: spaces while summing
  h.write('0', 156, 1, 'ascii'); // typeflag: regular file
  h.write('ustar\0', 257, 6, 'ascii');
  h.write('00', 263, 2, 'ascii');
  h.write('sandtrail', 265, 32, 'ascii'); // uname
  h.write('sandtrail', 297, 32, 'ascii'); // gname
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

/** A ustar archive of `entries`, streamed from disk. Fails when a file changes size meanwhile. */
export async function* tarStream(entries: readonly TarEntry[]): AsyncGenerator<Buffer> {
  for (const e of entries) {
    yield ustarHeader(e.name, e.size, e.mtimeMs);
    let n = 0;
    for await (const chunk of createReadStream(e.path) as AsyncIterable<Buffer>) {
      n += chunk.length;
      yield chunk;
    }
    if (n !== e.size) throw new Error(`${e.name} changed size while being packed (${e.size} → ${n} bytes)`);
    const pad = (512 - (e.size % 512)) % 512;
    if (pad > 0) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(1024); // end-of-archive: two zero blocks
}

/**
 * Writes `out` = bzip2(tar(entries)), compressing in a `compressor -c` child process
 * (`lbzip2` or `bzip2`). `register` receives the child so the caller can kill it on shutdown.
 */
export async function writeHourPackage(
  entries: readonly TarEntry[],
  out: string,
  compressor: string,
  register?: (child: ReturnType<typeof spawn>) => void,
): Promise<void> {
  const child = spawn(compressor, ['-c'], { stdio: ['pipe', 'pipe', 'pipe'] });
  register?.(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${compressor} -c exited with ${code ?? signal}: ${stderr.trim()}`)),
    );
  });
  try {
    await Promise.all([pipeline(Readable.from(tarStream(entries)), child.stdin), pipeline(child.stdout, createWriteStream(out)), exited]);
  } catch (err) {
    child.kill('SIGKILL');
    await rm(out, { force: true });
    throw err;
  }
}
