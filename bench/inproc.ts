/** The in-process phases: the raw decode+parse limit and normalize alone, no queue, no output. */
import type { Config } from '../src/config/index.js';
import { DirectorySource, readLines } from '../src/feed/index.js';
import { normalizeLine } from '../src/normalize/index.js';
import type { FeedManifest } from '../src/synth/index.js';
import { BenchFailure, throwIfAborted } from './failure.js';
import { TreeSampler, type RolePeak } from './procs.js';

/** Figures of one benchmark phase. */
export interface PhaseResult {
  phase: 'raw' | 'normalize' | 'e2e';
  /** Feed lines consumed (malformed ones included): the same input for every phase. */
  lines: number;
  /** Lines that came out usable: parsed JSON (raw), accepted documents (normalize, e2e). */
  ok: number;
  /** Uncompressed bytes decoded. */
  bytes: number;
  seconds: number;
  /** Peak memory per process role, largest first. */
  peaks: RolePeak[];
}

/**
 * Reads every batch of the feed through the same DirectorySource → decodeStream (spawned
 * bzip2 decoder) → readLines path the feed worker uses, one batch after another as a feed
 * worker with concurrency 1 does, and either only JSON.parses each line (`raw`: the limit no
 * pipeline on this machine can beat) or runs normalizeLine (`normalize`). Nothing is kept.
 * Throws a BenchFailure once `signal` is aborted (time limit, SIGINT).
 */
export async function measureInProcess(
  phase: 'raw' | 'normalize',
  feedDir: string,
  manifest: FeedManifest,
  config: Config,
  signal?: AbortSignal,
): Promise<PhaseResult> {
  const source = new DirectorySource(feedDir, { decoder: config.feed.decoder, decoderThreads: config.feed.decoderThreads });
  const lineOpts = { maxLineBytes: config.feed.maxLineBytes, prefixBytes: config.feed.dlqPrefixBytes };
  let lines = 0;
  let ok = 0;
  let bytes = 0;
  const counted = async function* (src: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const b of src) {
      bytes += b.length;
      yield b;
    }
  };
  const sampler = new TreeSampler().start();
  const t0 = performance.now();
  try {
    for (const f of manifest.files) {
      throwIfAborted(signal, phase);
      const handle = await source.open(f.minute);
      if (!handle) throw new BenchFailure(`phase ${phase}: batch ${f.minute} (${f.file}) not found in ${feedDir}`);
      for await (const line of readLines(counted(handle.bytes()), lineOpts)) {
        lines += 1;
        throwIfAborted(signal, phase);
        if (line.kind !== 'text') continue;
        if (phase === 'raw') {
          try {
            // Counting objects keeps the parse result observably used.
            const v: unknown = JSON.parse(line.text);
            if (v !== null && typeof v === 'object') ok += 1;
          } catch {
            // a planted malformed line: counted in `lines`, not in `ok`
          }
        } else if (normalizeLine(line.text).ok) {
          ok += 1;
        }
      }
    }
  } catch (err) {
    sampler.stop();
    throw err;
  }
  const seconds = (performance.now() - t0) / 1000;
  return { phase, lines, ok, bytes, seconds, peaks: sampler.stop() };
}
