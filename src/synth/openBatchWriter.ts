import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants as fsConstants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { createGzip } from 'node:zlib';

/** Output encoding of a batch file. */
export type Compression = 'bz2' | 'gz' | 'none';

/** File name suffix per compression. */
export const EXTENSIONS: Readonly<Record<Compression, string>> = { bz2: '.jsonl.bz2', gz: '.jsonl.gz', none: '.jsonl' };

/** Streaming writer of one batch file. */
export interface BatchWriter {
  /** Queues text; returns a promise only when the caller must wait (backpressure). */
  write(text: string): Promise<void> | undefined;
  /** Ends the current compressed stream and starts a new one appended to the same file. */
  nextStream(): Promise<void>;
  /** Flushes, waits for the compressor, closes the file; resolves to the file's size in bytes. */
  close(): Promise<number>;
  /** Stops everything after a failure (kills the compressor, closes the file); never throws. */
  abort(): Promise<void>;
}

/** One compressed stream: where to write, and a promise settled when its output is in the file. */
interface Segment {
  input: Writable;
  done: Promise<void>;
  kill(): void;
}

/** Buffered text is handed to the compressor in chunks this big: fewer, larger pipe writes. */
const CHUNK = 256 * 1024;

/**
 * The bzip2 program to use: `preferred` if given, else lbzip2 (parallel, as the project installs
 * it), else bzip2. Throws when none is on PATH.
 */
export function findCompressor(preferred?: string): string {
  const candidates = preferred ? [preferred] : ['lbzip2', 'bzip2'];
  for (const c of candidates) {
    if (c.includes('/')) return c;
    for (const dir of (process.env.PATH ?? '').split(delimiter)) {
      try {
        accessSync(join(dir, c), fsConstants.X_OK);
        return c;
      } catch {
        // not in this directory
      }
    }
  }
  throw new Error(`no bzip2 compressor found on PATH (tried ${candidates.join(', ')}); install lbzip2 or bzip2`);
}

/**
 * Opens `path` for a streamed batch. bzip2 runs as a child process writing straight into the file
 * (compression then runs on another core while this process keeps generating); gzip runs in zlib's
 * thread pool. Memory stays bounded by the chunk size and the pipe buffers.
 */
export async function openBatchWriter(path: string, compression: Compression, compressor = 'bzip2'): Promise<BatchWriter> {
  const fh = await open(path, 'w');
  let segment = startSegment(fh, compression, compressor);
  let buf = '';

  const push = (text: string): Promise<void> | undefined => {
    if (segment.input.write(text)) return undefined;
    return Promise.race([once(segment.input, 'drain').then(() => undefined), segment.done]);
  };
  const flush = async (): Promise<void> => {
    if (buf.length === 0) return;
    const p = push(buf);
    buf = '';
    if (p) await p;
  };
  const endSegment = async (): Promise<void> => {
    await flush();
    segment.input.end();
    await segment.done;
  };

  return {
    write(text) {
      buf += text;
      if (buf.length < CHUNK) return undefined;
      const p = push(buf);
      buf = '';
      return p;
    },
    async nextStream() {
      await endSegment();
      segment = startSegment(fh, compression, compressor);
    },
    async close() {
      try {
        await endSegment();
        return (await fh.stat()).size;
      } finally {
        await fh.close();
      }
    },
    async abort() {
      segment.kill();
      await segment.done.catch(() => undefined);
      await fh.close().catch(() => undefined);
    },
  };
}

function startSegment(fh: FileHandle, compression: Compression, compressor: string): Segment {
  if (compression === 'bz2') return bzip2Segment(fh, compressor);
  const input = compression === 'gz' ? createGzip({ level: 6 }) : new PassThrough();
  // Pumps the stream's output into the file at its current position: sequential segments therefore
  // land one after another, which is exactly a multi-member gzip / concatenated file.
  const done = (async (): Promise<void> => {
    for await (const chunk of input as AsyncIterable<Buffer>) await fh.write(chunk);
  })();
  done.catch(() => undefined); // observed by close(); avoid an unhandled rejection meanwhile
  return { input, done, kill: () => input.destroy() };
}

function bzip2Segment(fh: FileHandle, compressor: string): Segment {
  // The child inherits the descriptor and shares its offset, so a second child appends after the first.
  const child = spawn(compressor, ['-z', '-c', '-9'], { stdio: ['pipe', fh.fd, 'pipe'] });
  const stdin = child.stdin!; // both piped above, so never null
  const childErr = child.stderr!;
  let stderr = '';
  childErr.setEncoding('utf8');
  childErr.on('data', (d: string) => {
    if (stderr.length < 4000) stderr += d;
  });
  let stdinError: Error | undefined;
  stdin.on('error', (e) => {
    stdinError = e; // EPIPE when the child died; reported through `done`
  });
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`cannot run ${compressor}: ${e.message}`)));
    child.once('close', (code, signal) => {
      if (code === 0 && !stdinError) resolve();
      else
        reject(
          new Error(`${compressor} failed (${signal ?? `exit ${String(code)}`}): ${stderr.trim() || stdinError?.message || 'no message'}`),
        );
    });
  });
  done.catch(() => undefined);
  return {
    input: stdin,
    done,
    kill: () => {
      stdin.destroy();
      child.kill('SIGTERM');
    },
  };
}
