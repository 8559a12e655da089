/**
 * `npm run bench`: how far the end-to-end pipeline (feed worker → Redis → index worker →
 * SQLite) is from the raw limit of this machine (bzip2 decode + line split + JSON.parse), all
 * measured in one run on the same synthetic feed. See `npm run bench -- --help`.
 */
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/index.js';
import { resolveBzip2Decoder } from '../src/feed/index.js';
import { HELP, parseBenchArgs, UsageError, type BenchOptions } from './args.js';
import { measureEndToEnd } from './e2e.js';
import { prepareFeed } from './feed.js';
import { measureInProcess } from './inproc.js';
import { toJson, toText, verified, type BenchReport } from './report.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'bench', 'out');
const FEED = join(OUT, 'feed');

/** Progress goes to stderr so `--json` output on stdout stays one parseable object. */
const say = (msg: string): void => {
  process.stderr.write(`bench: ${msg}\n`);
};

async function run(o: BenchOptions): Promise<BenchReport> {
  // Other work on a 2-core box skews every phase: record how busy it was when we started.
  const loadAtStart = loadavg()[0] ?? 0;
  if (loadAtStart > 0.5) say(`note: 1-minute load average is ${loadAtStart.toFixed(2)}: figures will be lower than on an idle machine`);
  // Defaults only, as the workers get: an operator's SANDTRAIL_* must not skew one side.
  const config = loadConfig({ env: {} });
  const dec = resolveBzip2Decoder(config.feed.decoder, config.feed.decoderThreads);
  const { manifest, reused, generateSeconds } = await prepareFeed(
    { dir: FEED, seed: o.seed, perMinute: o.perMinute, targetBytes: Math.round(o.mb * 1e6) },
    say,
  );
  const lines = manifest.files.reduce((a, f) => a + f.lines, 0);

  say('phase raw: decode + split + JSON.parse...');
  const raw = await measureInProcess('raw', FEED, manifest, config);
  // The raw pass is the reference: if it did not see the whole feed, no ratio means anything.
  if (raw.bytes !== manifest.bytesUncompressed || raw.lines !== lines) {
    throw new Error(`raw pass read ${raw.bytes} bytes / ${raw.lines} lines, manifest says ${manifest.bytesUncompressed} / ${lines}`);
  }
  say(`  ${raw.seconds.toFixed(2)} s`);
  say('phase normalize: decode + split + normalizeLine...');
  const normalize = await measureInProcess('normalize', FEED, manifest, config);
  say(`  ${normalize.seconds.toFixed(2)} s`);
  say('phase e2e: private redis-server, feed worker and index worker processes, SQLite...');
  const e2e = await measureEndToEnd({
    root: ROOT,
    outDir: OUT,
    feedDir: FEED,
    manifest,
    feedConcurrency: o.feedConcurrency,
    indexConcurrency: o.indexConcurrency,
    keep: o.keep,
    say,
  });
  say(`  ${e2e.seconds.toFixed(2)} s${o.keep ? `; SQLite kept at ${relative(process.cwd(), e2e.dbPath)}` : ''}`);

  return {
    machine: {
      cpus: availableParallelism(),
      node: process.versions.node,
      decoder: [dec.name, ...dec.args].join(' '),
      loadAtStart: Math.round(loadAtStart * 100) / 100,
      loadAtEnd: Math.round((loadavg()[0] ?? 0) * 100) / 100,
    },
    options: { mb: o.mb, seed: o.seed, perMinute: o.perMinute, feedConcurrency: o.feedConcurrency, indexConcurrency: o.indexConcurrency },
    feed: {
      dir: relative(ROOT, FEED),
      files: manifest.files.length,
      lines,
      records: manifest.records,
      expectedIds: manifest.expectedIds.length,
      bytesUncompressed: manifest.bytesUncompressed,
      bytesCompressed: manifest.bytesCompressed,
      reused,
      generateSeconds,
    },
    phases: { raw, normalize, e2e },
  };
}

async function main(): Promise<void> {
  let opts: BenchOptions;
  try {
    opts = parseBenchArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\n(see npm run bench -- --help)\n`);
    process.exitCode = 2;
    return;
  }
  if (opts.help) {
    process.stdout.write(HELP);
    return;
  }
  try {
    const report = await run(opts);
    process.stdout.write(opts.json ? `${JSON.stringify(toJson(report))}\n` : `\n${toText(report)}\n`);
    if (!verified(report)) {
      const e = report.phases.e2e;
      process.stderr.write(
        `bench: FAILED: the store holds ${e.stored} documents (ids match: ${e.idsMatch}), the manifest expects ${e.expected}\n`,
      );
      process.exitCode = 1;
    }
  } catch (err) {
    process.stderr.write(`bench: failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  }
}

await main();
