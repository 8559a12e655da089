/** The in-process phases: the raw decode+parse limit and normalize alone, no queue, no output. */
import type { Config } from '../src/config/index.js';
import { DirectorySource, readLines } from '../src/feed/index.js';
import { normalizeLine } from '../src/normalize/index.js';
import type { FeedManifest } from '../src/synth/index.js';
import { BenchFailure, throwIfAborted } from './failure.js';
import { childCpuSeconds, TreeSampler, type RolePeak } from './procs.js';

/** Figures of one benchmark phase. */
export interface PhaseResult {
  phase: 'raw' | 'normalize' | 'official' | 'floor' | 'normalizeCli' | 'e2e' | 'backfill';
  /** Feed lines consumed (malformed ones included): the same input for every phase. */
  lines: number;
  /** Lines that came out usable: parsed JSON (raw), accepted documents (normalize, e2e). */
  ok: number;
  /** Uncompressed bytes decoded. */
  bytes: number;
  seconds: number;
  /** Peak memory per process role, largest first. */
  peaks: RolePeak[];
  /** CPU seconds of every process of the phase (children included), where measured. */
  cpuSeconds?: number;
}

/**
 * Per batch, prefix sums of the raw sizes (bytes with the newline) of the lines normalizeLine
 * accepted, in order: the raw bytes of accepted records i..j-1 are `p[j] - p[i]`.
 */
export type AcceptedSizes = Map<string, Float64Array>;

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
): Promise<PhaseResult & { accepted?: AcceptedSizes }> {
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
  const accepted: AcceptedSizes = new Map();
  const sampler = new TreeSampler().start();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const child0 = childCpuSeconds();
  try {
    for (const f of manifest.files) {
      throwIfAborted(signal, phase);
      const handle = await source.open(f.minute);
      if (!handle) throw new BenchFailure(`phase ${phase}: batch ${f.minute} (${f.file}) not found in ${feedDir}`);
      const sizes: number[] = [0];
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
          sizes.push((sizes[sizes.length - 1] ?? 0) + Buffer.byteLength(line.text) + 1);
        }
      }
      if (phase === 'normalize') accepted.set(f.minute, Float64Array.from(sizes));
    }
  } catch (err) {
    sampler.stop();
    throw err;
  }
  const seconds = (performance.now() - t0) / 1000;
  const own = process.cpuUsage(cpu0);
  const cpuSeconds = (own.user + own.system) / 1e6 + childCpuSeconds() - child0;
  return { phase, lines, ok, bytes, seconds, peaks: sampler.stop(), cpuSeconds, ...(phase === 'normalize' ? { accepted } : {}) };
}
