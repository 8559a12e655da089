import { constants, createReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { SandtrailError } from '../../errors/index.js';
import { compressionOf, decodeStream, normalizeAndSerialize, readLines, type Compression } from '../../feed/index.js';
import { writeOut, type CliContext } from '../context.js';

/** Bytes the decoder is told by: bzip2's `BZh`, gzip's 1f 8b. */
const MAGIC_BYTES = 3;

function compressionOfHead(head: Buffer): Compression {
  return head[0] === 0x42 && head[1] === 0x5a && head[2] === 0x68 ? 'bz2' : head[0] === 0x1f && head[1] === 0x8b ? 'gz' : 'none';
}

/**
 * Peeks the first bytes of stdin to pick a decoder, then replays them. The first read may hold
 * fewer bytes than the magic (a slow pipe, ssh): it reads on until it has them, or the input ends.
 */
async function stdinBytes(): Promise<{ compression: Compression; bytes: AsyncIterable<Buffer> }> {
  const it = (process.stdin as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (size < MAGIC_BYTES) {
    const r = await it.next();
    if (r.done) {
      ended = true;
      break;
    }
    head.push(r.value);
    size += r.value.length;
  }
  async function* all(): AsyncGenerator<Buffer> {
    yield* head;
    if (ended) return;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  }
  return { compression: compressionOfHead(Buffer.concat(head)), bytes: all() };
}

/**
 * `sandtrail normalize`: canonical documents to stdout, one JSON rejection per bad line to
 * stderr. Returns the exit code: 0 clean, 3 when any line was rejected.
 */
export async function normalizeCommand(files: string[], ctx: CliContext): Promise<number> {
  // every input checked before the first document is written: a wrong argument ends the command at once
  for (const f of files) {
    const info = await stat(f).catch((err: NodeJS.ErrnoException) => {
      throw new SandtrailError('SOURCE_NOT_FOUND', `cannot read ${f}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
    });
    if (info.isDirectory()) throw new SandtrailError('USAGE', `${f} is a directory: give the batch files in it (${f}/*.bz2)`);
    await access(f, constants.R_OK).catch((err: Error) => {
      throw new SandtrailError('SOURCE_NOT_FOUND', `cannot read ${f}: ${err.message}`);
    });
  }
  const inputs = files.length ? files : ['-'];
  let rejected = 0;
  for (const file of inputs) {
    let bytes: AsyncIterable<Buffer>;
    if (file === '-') {
      const s = await stdinBytes();
      bytes = decodeStream(s.bytes, s.compression, { decoder: ctx.config.feed.decoder, threads: ctx.config.feed.decoderThreads });
    } else {
      const c = compressionOf(file);
      bytes =
        c === 'none'
          ? (createReadStream(file) as AsyncIterable<Buffer>)
          : decodeStream(file, c, { decoder: ctx.config.feed.decoder, threads: ctx.config.feed.decoderThreads });
    }
    const where = inputs.length > 1 ? { file } : {};
    for await (const line of readLines(bytes, { maxLineBytes: ctx.config.feed.maxLineBytes, prefixBytes: 0 })) {
      if (line.kind === 'text') {
        // the feed stage's own per-record path: no record, however deep or large, stops the command
        const r = normalizeAndSerialize(line.text, ctx.config.feed.maxDepth);
        if ('json' in r) {
          await writeOut(`${r.json}\n`);
          continue;
        }
        process.stderr.write(`${JSON.stringify({ ...where, line: line.lineNo, code: r.code, path: r.path, message: r.message })}\n`);
      } else {
        const err =
          line.kind === 'oversize'
            ? { code: 'line_too_long', path: '$', message: `line is ${line.size} bytes, over the ${ctx.config.feed.maxLineBytes}-byte cap` }
            : { code: 'invalid_utf8', path: '$', message: 'line is not valid UTF-8' };
        process.stderr.write(`${JSON.stringify({ ...where, line: line.lineNo, ...err })}\n`);
      }
      rejected += 1;
    }
  }
  return rejected > 0 ? 3 : 0;
}
