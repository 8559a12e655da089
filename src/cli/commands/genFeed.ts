/**
 * `sandtrail gen-feed`: writes a synthetic GTI file_behaviour feed (one batch file per minute
 * plus manifest.json) for demos, benchmarks and tests of a deployment.
 *
 *   sandtrail gen-feed --out DIR --minutes N --per-minute M --seed S [options]
 *   npm run gen:feed -- ...   (the same, from a clone)
 *
 * Exit codes: 0 done, 1 generation failed (e.g. compressor crashed), 2 usage error.
 */
import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { addMinutes, isMinuteId } from '../../minute/index.js';
import { writeFeed, type Compression, type WriteFeedOptions } from '../../synth/index.js';

const HELP = `Usage: sandtrail gen-feed --out DIR [options]   (from a clone: npm run gen:feed -- ...)

Writes <DIR>/<YYYYMMDDhhmm>.jsonl.bz2 per minute and <DIR>/manifest.json (what a pipeline
must end up storing). Same seed and options give the same content.

  --out DIR               output directory (required; created when missing)
  --minutes N             minutes in the range, missing ones included (default 1;
                          with --target-mb, a minimum)
  --per-minute M          lines per minute file, malformed lines included (default 25)
  --seed S                integer or string seed (default 42)
  --start YYYYMMDDhhmm    first minute, UTC (default 202611010000)
  --malformed-rate R      share of malformed lines, 0..1 (default 0.01)
  --big-rate R            share of big (100 KB+) records, 0..1 (default 0.02)
  --update-rate R         share of lines re-emitting an earlier id with a newer
                          last_modification_date, 0..1 (default 0.03)
  --missing MINUTE        leave this minute without a file (repeatable)
  --missing-index K       leave the K-th minute of the range (0-based) without a file (repeatable)
  --oversize-bytes N      write one record line of exactly N bytes (default off), e.g. 2000000
  --oversize-minute MIN   minute holding the oversize line (default the middle minute)
  --compression C         bz2 | gz | none (default bz2)
  --multi-stream          write each file as two concatenated compressed streams
  --compressor PROG       bzip2 program (default lbzip2 when installed, else bzip2)
  --target-mb MB          keep adding minutes until MB megabytes (10^6 bytes) of
                          uncompressed JSON are written
  --clean                 first delete batch files and manifest.json already in DIR
  -h, --help              show this help
`;

class UsageError extends Error {}

function num(name: string, v: string | undefined, opts: { int?: boolean; min?: number; max?: number } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (
    v.trim() === '' ||
    !Number.isFinite(n) ||
    (opts.int && !Number.isInteger(n)) ||
    (opts.min !== undefined && n < opts.min) ||
    (opts.max !== undefined && n > opts.max)
  ) {
    const range = opts.max !== undefined ? ` in [${opts.min ?? '-inf'}, ${opts.max}]` : opts.min !== undefined ? ` >= ${opts.min}` : '';
    throw new UsageError(`--${name} must be ${opts.int ? 'an integer' : 'a number'}${range}, got ${JSON.stringify(v)}`);
  }
  return n;
}

function parse(argv: string[]): { help: true } | { help: false; opts: WriteFeedOptions; clean: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        out: { type: 'string' },
        minutes: { type: 'string' },
        'per-minute': { type: 'string' },
        seed: { type: 'string' },
        start: { type: 'string' },
        'malformed-rate': { type: 'string' },
        'big-rate': { type: 'string' },
        'update-rate': { type: 'string' },
        missing: { type: 'string', multiple: true },
        'missing-index': { type: 'string', multiple: true },
        'oversize-bytes': { type: 'string' },
        'oversize-minute': { type: 'string' },
        compression: { type: 'string' },
        'multi-stream': { type: 'boolean' },
        compressor: { type: 'string' },
        'target-mb': { type: 'string' },
        clean: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return { help: true };
  if (!values.out) throw new UsageError('--out DIR is required');
  const start = values.start ?? '202611010000';
  if (!isMinuteId(start)) throw new UsageError(`--start must be a UTC minute YYYYMMDDhhmm, got ${JSON.stringify(start)}`);
  const compression = (values.compression ?? 'bz2') as Compression;
  if (!['bz2', 'gz', 'none'].includes(compression))
    throw new UsageError(`--compression must be bz2, gz or none, got ${JSON.stringify(values.compression)}`);
  const missing = [...(values.missing ?? [])];
  for (const m of missing)
    if (!isMinuteId(m)) throw new UsageError(`--missing must be a UTC minute YYYYMMDDhhmm, got ${JSON.stringify(m)}`);
  for (const k of values['missing-index'] ?? []) missing.push(addMinutes(start, num('missing-index', k, { int: true, min: 0 })!));
  const oversizeMinute = values['oversize-minute'];
  if (oversizeMinute !== undefined && !isMinuteId(oversizeMinute))
    throw new UsageError(`--oversize-minute must be YYYYMMDDhhmm, got ${JSON.stringify(oversizeMinute)}`);
  const targetMb = num('target-mb', values['target-mb'], { min: 0 });
  const seedText = values.seed ?? '42';
  const updateRate = num('update-rate', values['update-rate'], { min: 0, max: 1 });
  const opts: WriteFeedOptions = {
    out: values.out,
    seed: /^\d{1,15}$/.test(seedText) ? Number(seedText) : seedText,
    start,
    minutes: num('minutes', values.minutes, { int: true, min: 0 }) ?? 1,
    perMinute: num('per-minute', values['per-minute'], { int: true, min: targetMb ? 1 : 0 }) ?? 25,
    malformedRate: num('malformed-rate', values['malformed-rate'], { min: 0, max: 1 }) ?? 0.01,
    bigRate: num('big-rate', values['big-rate'], { min: 0, max: 1 }) ?? 0.02,
    variants: updateRate === undefined ? {} : { update: updateRate },
    missingMinutes: missing,
    oversizeBytes: num('oversize-bytes', values['oversize-bytes'], { int: true, min: 0 }) ?? 0,
    oversizeMinute,
    compression,
    multiStream: values['multi-stream'] ?? false,
    compressor: values.compressor,
    targetBytes: targetMb ? Math.ceil(targetMb * 1e6) : 0,
  };
  return { help: false, opts, clean: values.clean ?? false };
}

/** Earlier generator output in `dir`: 12-digit batch files and manifest.json. */
async function earlierOutput(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]); // nothing there yet
  return names.filter((n) => /^\d{12}\.jsonl(\.bz2|\.gz)?$/.test(n) || n === 'manifest.json');
}

/** Removes earlier generator output from `dir`. */
async function clean(dir: string): Promise<number> {
  const ours = await earlierOutput(dir);
  await Promise.all(ours.map((n) => unlink(join(dir, n))));
  return ours.length;
}

/** Runs the generator with its own argument parser (argv: the arguments after `gen-feed`). */
export async function genFeedCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`gen-feed: ${e.message}\nRun with --help for usage.\n`);
    return 2;
  }
  if (parsed.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const { opts } = parsed;
  if (parsed.clean) await clean(opts.out);
  else {
    // files of an earlier run beside the new ones: a backfill of DIR would read minutes the manifest does not list
    const earlier = await earlierOutput(opts.out);
    if (earlier.length > 0) {
      process.stderr.write(
        `gen-feed: ${opts.out} already holds ${earlier.length} file(s) of an earlier run (${earlier.slice(0, 3).join(', ')}${earlier.length > 3 ? ', ...' : ''}): add --clean to replace them, or choose another --out\n`,
      );
      return 2;
    }
  }
  const t0 = performance.now();
  let manifest;
  try {
    manifest = await writeFeed(opts);
  } catch (e) {
    // writeFeed validates its options with RangeError: those are usage errors too.
    process.stderr.write(`gen-feed: ${(e as Error).message}\n`);
    return e instanceof RangeError ? 2 : 1;
  }
  const secs = (performance.now() - t0) / 1000;
  const mb = (b: number): string => (b / 1e6).toFixed(2);
  const manifestBytes = (await stat(join(opts.out, 'manifest.json'))).size;
  process.stdout.write(
    `gen-feed: ${manifest.files.length} files (${manifest.missing.length} missing), ${manifest.records} records, ` +
      `${manifest.malformedLines} malformed, ${manifest.updates.length} updates, ${mb(manifest.bytesUncompressed)} MB uncompressed, ` +
      `${mb(manifest.bytesCompressed)} MB ${manifest.compression}${manifest.compressor ? ` (${manifest.compressor})` : ''}, ` +
      `manifest ${mb(manifestBytes)} MB, ${secs.toFixed(1)} s (${(manifest.bytesUncompressed / 1e6 / secs).toFixed(1)} MB/s) -> ${opts.out}\n`,
  );
  return 0;
}
