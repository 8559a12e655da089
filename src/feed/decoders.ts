import { spawn } from 'node:child_process';
import { accessSync, constants, createReadStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { delimiter, join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { SandtrailError } from '../errors/index.js';

export type Compression = 'bz2' | 'gz' | 'none';
export type DecoderChoice = 'auto' | 'lbzip2' | 'pbzip2' | 'bzip2';

/** Where to look for decoder binaries besides PATH (sbin dirs are often missing for non-root users). */
const EXTRA_DIRS = ['/usr/bin', '/usr/local/bin', '/bin'];

/** Absolute path of an executable, or undefined. `extraDirs` are searched after PATH (a test seam: [] searches PATH only). */
export function findExecutable(
  name: string,
  pathEnv = process.env.PATH ?? '',
  extraDirs: readonly string[] = EXTRA_DIRS,
): string | undefined {
  for (const dir of [...pathEnv.split(delimiter), ...extraDirs]) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * bzip2 decoders in order of measured speed on two cores: lbzip2 ≈ 87 MB/s, pbzip2 (decodes
 * multi-stream files in parallel), bzip2 ≈ 35 MB/s. All handle multi-stream files and fail
 * loudly on truncated input, unlike the npm decoders we measured.
 */
const PREFERENCE: readonly Exclude<DecoderChoice, 'auto'>[] = ['lbzip2', 'pbzip2', 'bzip2'];

export interface Bzip2Decoder {
  name: string;
  path: string;
  args: string[];
}

/** Where executables are looked for: PATH (default process.env.PATH) and the extra directories after it. */
export interface ExecutableLookup {
  pathEnv?: string;
  extraDirs?: readonly string[];
}

/**
 * Picks the bzip2 decoder to spawn; throws DECODER_UNAVAILABLE saying how to install one.
 * `lookup` lets a caller at the edge (sandtrail doctor) say which PATH to search.
 */
export function resolveBzip2Decoder(choice: DecoderChoice = 'auto', threads = 0, lookup: ExecutableLookup = {}): Bzip2Decoder {
  const n = threads > 0 ? threads : availableParallelism();
  const names = choice === 'auto' ? PREFERENCE : [choice];
  for (const name of names) {
    const path = findExecutable(name, lookup.pathEnv, lookup.extraDirs);
    if (!path) continue;
    const args = name === 'bzip2' ? ['-dc'] : name === 'lbzip2' ? ['-dc', `-n${n}`] : ['-dc', `-p${n}`];
    return { name, path, args };
  }
  throw new SandtrailError(
    'DECODER_UNAVAILABLE',
    `no bzip2 decoder found (${names.join(', ')}); install one, e.g. "apt-get install lbzip2"`,
  );
}

/** Compression implied by a file name. */
export function compressionOf(fileName: string): Compression {
  if (/\.bz2$/i.test(fileName)) return 'bz2';
  if (/\.gz$/i.test(fileName)) return 'gz';
  return 'none';
}

export interface DecodeOptions {
  decoder?: DecoderChoice;
  threads?: number;
  signal?: AbortSignal;
}

/**
 * Streams the decoded bytes of a batch. Input is a file path or a byte stream (an HTTP body).
 * bzip2 runs in a child process so decoding uses another core; the child's stdout is consumed
 * by async iteration, which gives natural backpressure. A non-zero exit (truncated or corrupt
 * input) raises the permanent BATCH_CORRUPT after the bytes already produced; an error of the
 * input stream itself (a download cut mid-body) is rethrown as it is, so it stays retryable.
 */
export async function* decodeStream(
  input: string | AsyncIterable<Buffer>,
  compression: Compression,
  opts: DecodeOptions = {},
): AsyncGenerator<Buffer> {
  if (compression === 'none') {
    yield* typeof input === 'string' ? readFile(input, opts.signal) : input;
    return;
  }
  if (compression === 'gz') {
    // 256 KiB per round trip to the thread pool instead of zlib's 16 KiB, as readFile reads
    const gunzip = createGunzip({ chunkSize: 256 * 1024 });
    const feed = typeof input === 'string' ? createReadStream(input) : input;
    const pump = pipeInto(feed, gunzip);
    try {
      for await (const chunk of gunzip) yield chunk as Buffer;
    } catch (err) {
      // a download cut mid-body is the network's fault (retryable), not the file's
      const inputError = await pump;
      if (inputError) throw inputError;
      throw corrupt(`gzip decode failed: ${(err as Error).message}`, 'gzip', err);
    } finally {
      gunzip.destroy();
    }
    const inputError = await pump;
    if (inputError) throw inputError;
    return;
  }
  yield* bunzip(input, opts);
}

async function* readFile(path: string, signal?: AbortSignal): AsyncGenerator<Buffer> {
  for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024, signal })) yield chunk as Buffer;
}

/**
 * Copies src into dst; resolves with the source's own error (if any) instead of throwing it.
 * Stops when dst fails or closes (a decoder that met bad data): its reader reports why, and a
 * wait for a `drain` that never comes would hold the batch for good.
 */
async function pipeInto(src: AsyncIterable<Buffer> | NodeJS.ReadableStream, dst: NodeJS.WritableStream): Promise<Error | undefined> {
  const gone = (): boolean => (dst as unknown as { destroyed?: boolean }).destroyed === true;
  try {
    for await (const chunk of src as AsyncIterable<Buffer>) {
      if (gone()) return undefined;
      if (!dst.write(chunk) && !(await drained(dst))) return undefined;
    }
    dst.end();
    return undefined;
  } catch (err) {
    (dst as unknown as { destroy(e?: Error): void }).destroy(err as Error);
    return err as Error;
  }
}

/** Resolves true once dst drains, false when it errors or closes first. */
function drained(dst: NodeJS.WritableStream): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const settle = (ok: boolean) => (): void => {
      dst.off('drain', onDrain);
      dst.off('error', onEnd);
      dst.off('close', onEnd);
      resolve(ok);
    };
    const onDrain = settle(true);
    const onEnd = settle(false);
    dst.once('drain', onDrain);
    dst.once('error', onEnd);
    dst.once('close', onEnd);
  });
}

/** A file that will not decode, ever: permanent, so it is tried once and its batch marked failed. */
function corrupt(message: string, decoder: string, cause?: unknown): SandtrailError {
  return new SandtrailError('BATCH_CORRUPT', message, { decoder }, { cause });
}

async function* bunzip(input: string | AsyncIterable<Buffer>, opts: DecodeOptions): AsyncGenerator<Buffer> {
  const dec = resolveBzip2Decoder(opts.decoder, opts.threads);
  const fromFile = typeof input === 'string';
  const child = spawn(dec.path, fromFile ? [...dec.args, '--', input] : dec.args, {
    stdio: [fromFile ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  const { stdout, stderr: errStream } = child;
  if (!stdout || !errStream) throw new SandtrailError('DECODER_UNAVAILABLE', `${dec.name}: no stdio pipes`);
  let stderr = '';
  errStream.setEncoding('utf8');
  errStream.on('data', (s: string) => {
    if (stderr.length < 4096) stderr += s;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  const onAbort = (): void => {
    child.kill('SIGKILL');
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  let feeding: Promise<Error | undefined> | undefined;
  if (!fromFile && child.stdin) {
    child.stdin.on('error', () => undefined); // EPIPE when the decoder dies early: reported via exit code
    feeding = pipeInto(input, child.stdin);
  }
  let finished = false;
  try {
    for await (const chunk of stdout) yield chunk as Buffer;
    const inputError = await feeding;
    const r = await exited;
    finished = true;
    // a download cut mid-body is the network's fault (retryable), not the file's
    if (inputError) throw inputError;
    if (r.error) throw new SandtrailError('DECODER_UNAVAILABLE', `${dec.name} could not run: ${r.error.message}`, { decoder: dec.name });
    if (r.code !== 0) {
      const why = (stderr.trim() || `exit code ${r.code ?? r.signal}`).split('\n')[0] as string;
      // killed by a signal (out of memory, an operator): the same bytes may decode next time
      if (r.code === null) throw new SandtrailError('DECODE_FAILED', `${dec.name} was stopped: ${why}`, { decoder: dec.name });
      throw corrupt(`${dec.name} failed: ${why} (the batch file is truncated, corrupt or not bzip2)`, dec.name);
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    if (!finished) child.kill('SIGKILL');
  }
}
