/** The benchmark's synthetic feed: generated once, reused while its manifest matches the options. */
import { readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_VARIANT_RATES, writeFeed, type FeedManifest } from '../src/synth/index.js';

/** What the feed must look like to be reused. */
export interface FeedSpec {
  dir: string;
  seed: number | string;
  perMinute: number;
  targetBytes: number;
}

/** The feed in use and how it came to be. */
export interface PreparedFeed {
  manifest: FeedManifest;
  reused: boolean;
  /** Seconds spent generating (0 when reused). */
  generateSeconds: number;
}

// writeFeed's defaults, spelled out so a manifest written with other rates is not reused.
const DEFAULTS = { start: '202611010000', malformedRate: 0.01, bigRate: 0.02, compression: 'bz2' } as const;

/**
 * Why `m` is not the feed writeFeed would write for `spec`, or undefined when it is. With
 * targetBytes, writeFeed stops at the first minute that reaches the target, so the minute
 * before the last one must still be below it.
 */
export async function mismatch(m: FeedManifest, spec: FeedSpec): Promise<string | undefined> {
  if (m.seed !== spec.seed) return `seed ${String(m.seed)} != ${String(spec.seed)}`;
  if (m.perMinute !== spec.perMinute) return `perMinute ${m.perMinute} != ${spec.perMinute}`;
  if (m.start !== DEFAULTS.start || m.malformedRate !== DEFAULTS.malformedRate || m.bigRate !== DEFAULTS.bigRate) {
    return 'start, malformedRate or bigRate differ from the defaults';
  }
  if (m.compression !== DEFAULTS.compression || m.multiStream || m.oversize) return 'not a plain bz2 feed';
  if (!isDeepStrictEqual({ ...m.variantRates }, { ...DEFAULT_VARIANT_RATES })) return 'variant rates differ from the defaults';
  if (m.missing.length > 0) return 'has missing minutes';
  const last = m.files[m.files.length - 1];
  if (!last || m.bytesUncompressed < spec.targetBytes || m.bytesUncompressed - last.bytesUncompressed >= spec.targetBytes) {
    return `holds ${m.bytesUncompressed} bytes, not the first minute count reaching ${spec.targetBytes}`;
  }
  for (const f of m.files) {
    // A generation killed half-way leaves files whose sizes the manifest (from an earlier run) does not know.
    const size = await stat(join(spec.dir, f.file)).then(
      (s) => s.size,
      () => -1,
    );
    if (size !== f.bytesCompressed) return `${f.file} is missing or has another size`;
  }
  return undefined;
}

/**
 * Reuses `<dir>/manifest.json` when it matches, else deletes the old batch files (a smaller
 * feed must not inherit a larger one's extra minutes) and writes a new feed.
 */
export async function prepareFeed(spec: FeedSpec, say: (msg: string) => void): Promise<PreparedFeed> {
  const manifestPath = join(spec.dir, 'manifest.json');
  const old = await readFile(manifestPath, 'utf8').then(
    (t) => JSON.parse(t) as FeedManifest,
    () => undefined,
  );
  if (old) {
    const why = await mismatch(old, spec);
    if (!why) {
      say(`reusing feed ${spec.dir}: ${old.files.length} files, ${mb(old.bytesUncompressed)} MB uncompressed`);
      return { manifest: old, reused: true, generateSeconds: 0 };
    }
    say(`regenerating feed: existing manifest ${why}`);
  }
  const names = await readdir(spec.dir).catch(() => [] as string[]);
  await Promise.all(names.filter((n) => /^\d{12}\.jsonl(\.bz2|\.gz)?$|^manifest\.json$/.test(n)).map((n) => unlink(join(spec.dir, n))));
  say(`generating ~${mb(spec.targetBytes)} MB feed in ${spec.dir} (seed ${String(spec.seed)}, ${spec.perMinute} lines/minute)...`);
  const t0 = performance.now();
  const manifest = await writeFeed({ out: spec.dir, seed: spec.seed, targetBytes: spec.targetBytes, perMinute: spec.perMinute });
  const generateSeconds = (performance.now() - t0) / 1000;
  say(`generated ${manifest.files.length} files, ${mb(manifest.bytesUncompressed)} MB in ${generateSeconds.toFixed(1)} s`);
  return { manifest, reused: false, generateSeconds };
}

/** Bytes as MB (10^6) with one decimal, for messages. */
export function mb(bytes: number): string {
  return (bytes / 1e6).toFixed(1);
}
