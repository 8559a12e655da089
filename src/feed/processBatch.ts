import { deadLetterId, type DeadLetterInput } from '../dlq/index.js';
import type { Logger } from '../log/index.js';
import { normalizeLine, type BehaviourDoc } from '../normalize/index.js';
import type { BatchLogEntry } from './BatchLog.js';
import type { FeedSource } from './FeedSource.js';
import type { MinuteId } from './minute.js';
import { readLines, type FeedLine } from './readLines.js';

export interface ProcessBatchOptions {
  source: FeedSource;
  batch: MinuteId;
  maxLineBytes: number;
  prefixBytes: number;
  chunkMaxDocs: number;
  chunkMaxBytes: number;
  /** Lines 1..skipLines were consumed before (a cursor `minute-N`): read past them. */
  skipLines?: number;
  /** Receives each full chunk in order (n = 0, 1, ...); awaiting it is the backpressure. */
  emitChunk(n: number, docs: BehaviourDoc[], approxBytes: number): Promise<void>;
  deadLetter(entries: DeadLetterInput[]): Promise<void>;
  signal?: AbortSignal;
  log?: Logger;
}

export type BatchOutcome = Omit<BatchLogEntry, 'error'> & { status: 'ok' | 'empty' | 'missing' };

/** Dead letters are written in groups, bounded by count and by raw bytes so memory stays bounded. */
const DLQ_FLUSH = 100;
const DLQ_FLUSH_BYTES = 4 * 1024 * 1024;

/**
 * The feed stage as a plain function: stream one batch, normalize every line, hand chunks of
 * documents on and malformed lines to the dead-letter store. Chunk boundaries depend only on
 * the batch content, so a re-run produces the same chunks (and the same index job ids).
 */
export async function processBatch(o: ProcessBatchOptions): Promise<BatchOutcome> {
  const startedAt = Date.now();
  const base = { batch: o.batch, source: o.source.spec, startedAt };
  const handle = await o.source.open(o.batch);
  if (!handle) {
    o.log?.info({ batch: o.batch }, 'batch missing');
    return { ...base, status: 'missing', lines: 0, accepted: 0, rejected: 0, chunks: 0, bytesDecoded: 0, finishedAt: Date.now() };
  }

  let bytesDecoded = 0;
  const counted = async function* (src: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const b of src) {
      bytesDecoded += b.length;
      yield b;
    }
  };

  let lines = 0;
  let accepted = 0;
  let rejected = 0;
  let chunks = 0;
  let docs: BehaviourDoc[] = [];
  let docBytes = 0;
  let dead: DeadLetterInput[] = [];
  let deadBytes = 0;

  const flushChunk = async (): Promise<void> => {
    if (docs.length === 0) return;
    const out = docs;
    const bytes = docBytes;
    docs = [];
    docBytes = 0;
    await o.emitChunk(chunks, out, bytes);
    chunks += 1;
  };
  const flushDead = async (): Promise<void> => {
    if (dead.length === 0) return;
    const out = dead;
    dead = [];
    deadBytes = 0;
    await o.deadLetter(out);
  };

  const lineStream = readLines(counted(handle.bytes(o.signal)), { maxLineBytes: o.maxLineBytes, prefixBytes: o.prefixBytes });
  const skip = o.skipLines ?? 0;
  for await (const line of lineStream) {
    if (line.lineNo <= skip) continue;
    lines += 1;
    if (line.kind === 'text') {
      const r = normalizeLine(line.text);
      if (r.ok) {
        accepted += 1;
        docs.push(r.doc);
        docBytes += line.text.length;
        if (docs.length >= o.chunkMaxDocs || docBytes >= o.chunkMaxBytes) await flushChunk();
        continue;
      }
      dead.push(letter(o.batch, line, r.rejection.code, r.rejection.path, r.rejection.message));
    } else {
      dead.push(unreadableLetter(o.batch, line, o.maxLineBytes));
    }
    rejected += 1;
    deadBytes += (dead[dead.length - 1] as DeadLetterInput).raw.length;
    if (dead.length >= DLQ_FLUSH || deadBytes >= DLQ_FLUSH_BYTES) await flushDead();
  }
  await flushChunk();
  await flushDead();
  return { ...base, status: accepted > 0 ? 'ok' : 'empty', lines, accepted, rejected, chunks, bytesDecoded, finishedAt: Date.now() };
}

function letter(batch: MinuteId, line: FeedLine & { kind: 'text' }, code: string, path: string, message: string): DeadLetterInput {
  return {
    id: deadLetterId('normalize', batch, line.lineNo),
    stage: 'normalize',
    batch,
    line: line.lineNo,
    docId: null,
    code,
    path,
    message,
    raw: line.text,
    rawEncoding: 'utf8',
    rawSize: Buffer.byteLength(line.text),
    rawTruncated: false,
  };
}

function unreadableLetter(batch: MinuteId, line: Exclude<FeedLine, { kind: 'text' }>, maxLineBytes: number): DeadLetterInput {
  const common = {
    id: deadLetterId('normalize', batch, line.lineNo),
    stage: 'normalize' as const,
    batch,
    line: line.lineNo,
    docId: null,
    path: '$',
  };
  if (line.kind === 'oversize') {
    return {
      ...common,
      code: 'line_too_long',
      message: `line is ${line.size} bytes, over the ${maxLineBytes}-byte cap; only the first ${line.prefix.length} bytes are kept`,
      // keep valid UTF-8 only: the prefix may end inside a multi-byte character
      raw: line.prefix.toString('utf8').replace(/\uFFFD+$/, ''),
      rawEncoding: 'utf8',
      rawSize: line.size,
      rawTruncated: true,
    };
  }
  return {
    ...common,
    code: 'invalid_utf8',
    message: 'line is not valid UTF-8; raw bytes kept as base64',
    raw: line.raw.toString('base64'),
    rawEncoding: 'base64',
    rawSize: line.raw.length,
    rawTruncated: false,
  };
}
