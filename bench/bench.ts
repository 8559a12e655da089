/**
 * `npm run bench`: how far the end-to-end pipeline (feed workers → Redis → index workers →
 * SQLite) and the backfill command are from the raw limit of this machine (bzip2 decode + line
 * split + JSON.parse) and from the official Python client's read loop, all measured in one run
 * on the same synthetic feed. See `npm run bench -- --help`.
 */
import { mkdirSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/index.js';
import { resolveBzip2Decoder } from '../src/feed/index.js';
import { HELP, parseBenchArgs, UsageError, type BenchOptions } from './args.js';
import { measureBackfillCli, type BackfillCliResult } from './backfill.js';
import { startBenchElasticsearch } from './elasticsearch.js';
import { measureNormalizeCli } from './normalizeCli.js';
import { ensureBuilt } from './build.js';
import { measureEndToEnd } from './e2e.js';
import { measureFloor } from './floor.js';
import { BenchFailure, throwIfAborted } from './failure.js';
import { prepareFeed } from './feed.js';
import { measureInProcess, type PhaseResult } from './inproc.js';
import { measureOfficial } from './official.js';
import { esTarget, toJson, verificationProblems, type BenchReport } from './report.js';
import { toText } from './reportText.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** Untimed backfills into a node of the bench's own before the timed one, at most. */
const WARM_UP_RUNS = 4;
/** After the run is given up, how long the phases get to stop their processes before a hard exit. */
const STOP_GRACE_MS = 30_000;

/** Progress goes to stderr so `--json` output on stdout stays one parseable object. */
const say = (msg: string): void => {
  process.stderr.write(`bench: ${msg}\n`);
};

/** Throws unless an in-process phase read the whole feed: otherwise its figures compare nothing. */
function checkWholeFeed(p: PhaseResult, bytes: number, lines: number): void {
  if (p.bytes !== bytes || p.lines !== lines) {
    throw new BenchFailure(`phase ${p.phase} read ${p.bytes} bytes / ${p.lines} lines, the manifest says ${bytes} / ${lines}`);
  }
}

async function run(o: BenchOptions, signal: AbortSignal): Promise<BenchReport> {
  const OUT = o.out === undefined ? join(ROOT, 'bench', 'out') : resolve(o.out);
  const FEED = join(OUT, 'feed');
  mkdirSync(FEED, { recursive: true });
  // Other work on a 2-core box skews every phase: record how busy it was when we started.
  const loadAtStart = loadavg()[0] ?? 0;
  if (loadAtStart > 0.5) say(`note: 1-minute load average is ${loadAtStart.toFixed(2)}: figures will be lower than on an idle machine`);
  // Before any phase, so a compile does not run alongside a measurement.
  const built = await ensureBuilt(ROOT, say, signal);
  throwIfAborted(signal, 'build');
  // Defaults only, as the workers get: an operator's SANDTRAIL_* must not skew one side.
  const config = loadConfig({ env: {} });
  // The in-process references decode with every core: the raw limit is the machine's, not the pipeline's setting.
  const reference = { ...config, feed: { ...config.feed, decoderThreads: 0 } };
  const dec = resolveBzip2Decoder(reference.feed.decoder, reference.feed.decoderThreads);
  const pipelineDec = resolveBzip2Decoder(config.feed.decoder, config.feed.decoderThreads);
  const { manifest, reused, generateSeconds } = await prepareFeed(
    { dir: FEED, seed: o.seed, perMinute: o.perMinute, targetBytes: Math.round(o.mb * 1e6) },
    say,
  );
  const lines = manifest.files.reduce((a, f) => a + f.lines, 0);
  throwIfAborted(signal, 'feed');
  if (manifest.files.length === 0 || lines === 0) throw new BenchFailure(`the feed in ${FEED} has no lines: nothing to measure`);

  const loadAtPhase: Record<string, number> = {};
  const phaseLoad = (name: string): void => void (loadAtPhase[name] = Math.round((loadavg()[0] ?? 0) * 100) / 100);
  phaseLoad('raw');
  say('phase raw: decode + split + JSON.parse...');
  const raw = await measureInProcess('raw', FEED, manifest, reference, signal);
  // The raw pass is the reference: if it did not see the whole feed, no ratio means anything.
  checkWholeFeed(raw, manifest.bytesUncompressed, lines);
  say(`  ${raw.seconds.toFixed(2)} s`);
  phaseLoad('normalize');
  say('phase normalize: decode + split + normalizeLine...');
  const { accepted, ...normalize } = await measureInProcess('normalize', FEED, manifest, reference, signal);
  checkWholeFeed(normalize, manifest.bytesUncompressed, lines);
  say(`  ${normalize.seconds.toFixed(2)} s`);
  phaseLoad('official');
  say('phase official client: python3 bench/official_read_loop.py (bz2.decompress per file + json.loads per line)...');
  const official = await measureOfficial(ROOT, FEED, manifest, signal);
  if (official.skipped) say(`  skipped: ${official.reason}`);
  else {
    if (official.bytes !== manifest.bytesUncompressed || official.lines !== lines) {
      throw new BenchFailure(
        `phase official client read ${official.bytes} bytes / ${official.lines} lines, the manifest says ${manifest.bytesUncompressed} / ${lines}`,
      );
    }
    say(`  ${official.seconds.toFixed(2)} s`);
  }
  phaseLoad('floor');
  say(
    `phase store floor: node bench/storeFloor.mjs (${pipelineDec.name} + split + JSON.parse, each line stored as it is by id from a thread)...`,
  );
  const floor = await measureFloor({ root: ROOT, outDir: OUT, feedDir: FEED, manifest, decoder: pipelineDec, signal });
  if (floor.bytes !== manifest.bytesUncompressed || floor.lines !== lines) {
    throw new BenchFailure(
      `phase store floor read ${floor.bytes} bytes / ${floor.lines} lines, the manifest says ${manifest.bytesUncompressed} / ${lines}`,
    );
  }
  say(`  ${floor.seconds.toFixed(2)} s`);
  phaseLoad('normalizeCli');
  say('phase normalize (CLI): node dist/src/cli/run.js normalize FILE... > /dev/null...');
  const normalizeCli = await measureNormalizeCli({ root: ROOT, outDir: OUT, feedDir: FEED, manifest, signal });
  say(`  ${normalizeCli.seconds.toFixed(2)} s`);
  // Only REDIS_URL (what setup.sh and the CLI know): an operator's SANDTRAIL_* must not change what is measured.
  const redisUrl = process.env.REDIS_URL || undefined;
  phaseLoad('e2e');
  say(
    `phase e2e: ${redisUrl ? "REDIS_URL's Redis" : 'private redis-server'}, ${o.feedWorkers} feed worker and ${o.indexWorkers} index worker process(es), SQLite...`,
  );
  const e2e = await measureEndToEnd({
    root: ROOT,
    outDir: OUT,
    feedDir: FEED,
    manifest,
    feedConcurrency: o.feedConcurrency,
    indexConcurrency: o.indexConcurrency,
    feedWorkers: o.feedWorkers,
    indexWorkers: o.indexWorkers,
    accepted,
    keep: o.keep,
    redisUrl,
    signal,
    say,
  });
  say(`  ${e2e.seconds.toFixed(2)} s${o.keep ? `; SQLite kept at ${relative(process.cwd(), e2e.dbPath)}` : ''}`);
  phaseLoad('backfill');
  say(
    `phase backfill (CLI): node dist/src/cli/run.js backfill --source dir:... --store sqlite:... --json${redisUrl ? ' (REDIS_URL passed through)' : ''}...`,
  );
  const backfill = await measureBackfillCli({ root: ROOT, outDir: OUT, feedDir: FEED, manifest, redisUrl, keep: o.keep, signal, say });
  say(`  ${backfill.seconds.toFixed(2)} s${o.keep ? `; SQLite kept at ${relative(process.cwd(), backfill.dbPath)}` : ''}`);
  let backfillEs: BackfillCliResult | undefined;
  if (!o.skipElasticsearch) {
    const es = await startBenchElasticsearch(say);
    try {
      throwIfAborted(signal, 'backfill es');
      if (es.cpuSeconds() !== undefined) {
        // a fresh JVM spends its first minutes compiling its hot paths: a node that has been
        // running, as a cluster users write to has, is what the timed phase must meet. Warm-up
        // runs go on until the node's CPU for one run settles (within 10% of the run before).
        let previous: number | undefined;
        for (let run = 1; run <= WARM_UP_RUNS; run++) {
          say(`warming the node up (${run}/${WARM_UP_RUNS} at most): the same backfill into a throwaway prefix (not timed)...`);
          const warm = es.scratch();
          const cpu0 = es.cpuSeconds() ?? 0;
          // keep: false: the phase deletes the throwaway prefix's indices itself
          const w = await measureBackfillCli({
            root: ROOT,
            outDir: OUT,
            feedDir: FEED,
            manifest,
            redisUrl,
            keep: false,
            elasticsearch: warm,
            signal,
            say,
          });
          const cpu = (es.cpuSeconds() ?? 0) - cpu0;
          say(`  ${w.seconds.toFixed(2)} s, ${cpu.toFixed(1)} CPU-s of the node`);
          if (previous !== undefined && Math.abs(cpu - previous) <= 0.1 * previous) break;
          previous = cpu;
        }
      }
      phaseLoad('backfillEs');
      say(
        `phase backfill es (CLI): node dist/src/cli/run.js backfill --source dir:... --store es:${es.url} --json (Elasticsearch ${es.version}, ${es.where})...`,
      );
      backfillEs = await measureBackfillCli({
        root: ROOT,
        outDir: OUT,
        feedDir: FEED,
        manifest,
        redisUrl,
        keep: o.keep,
        elasticsearch: es,
        signal,
        say,
      });
      say(`  ${backfillEs.seconds.toFixed(2)} s${o.keep ? `; indices kept under the prefix ${es.prefix}` : ''}`);
    } finally {
      await es.stop();
    }
  }

  return {
    machine: {
      cpus: availableParallelism(),
      node: process.versions.node,
      decoder: [dec.name, ...dec.args].join(' '),
      pipelineDecoder: [pipelineDec.name, ...pipelineDec.args].join(' '),
      loadAtStart: Math.round(loadAtStart * 100) / 100,
      loadAtEnd: Math.round((loadavg()[0] ?? 0) * 100) / 100,
      loadAtPhase,
      python: official.skipped ? null : official.python,
    },
    options: {
      mb: o.mb,
      seed: o.seed,
      perMinute: o.perMinute,
      feedConcurrency: o.feedConcurrency,
      indexConcurrency: o.indexConcurrency,
      feedWorkers: o.feedWorkers,
      indexWorkers: o.indexWorkers,
      minEsRatio: o.minEsRatio,
    },
    built: built ?? null,
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
    phases: { raw, normalize, official, floor, normalizeCli, e2e, backfill, ...(backfillEs ? { backfillEs } : {}) },
  };
}

/**
 * Set once main has printed its outcome. Node ends a process whose event loop runs empty while
 * a top-level await is pending with status 13 and only a warning: the 'exit' check below turns
 * that (a phase awaiting something that can no longer happen) into a clear failure.
 */
let finished = false;
process.on('exit', (code) => {
  if (finished) return;
  process.stderr.write(
    `bench: FAILED: the process is ending (status ${code}) before the benchmark finished: a phase awaited something that can no longer happen; no report\n`,
  );
  process.exitCode = 1;
});

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

  // The run is given up after --timeout or on SIGINT/SIGTERM: the phase in progress stops its
  // processes and fails. Should that itself hang, exit hard (the exit handlers kill the children).
  const giveUp = new AbortController();
  const abandon = (why: string): void => {
    if (giveUp.signal.aborted) return;
    say(`giving up: ${why}`);
    giveUp.abort(new Error(why));
    setTimeout(() => {
      process.stderr.write(`bench: FAILED: ${why}, and the phase in progress did not stop within ${STOP_GRACE_MS / 1000} s\n`);
      finished = true;
      process.exit(1);
    }, STOP_GRACE_MS).unref();
  };
  const timer = setTimeout(() => abandon(`no result within --timeout ${opts.timeoutSeconds} s`), opts.timeoutSeconds * 1000);
  timer.unref();
  const onSignal = (sig: NodeJS.Signals): void => abandon(`interrupted by ${sig}`);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    const report = await run(opts, giveUp.signal);
    process.stdout.write(opts.json ? `${JSON.stringify(toJson(report))}\n` : `\n${toText(report)}\n`);
    const problems = verificationProblems(report);
    if (problems.length > 0) {
      process.stderr.write(`bench: FAILED verification: ${problems.join('; ')}\n`);
      process.exitCode = 1;
    }
    const target = esTarget(report);
    if (target && !target.met) {
      process.stderr.write(
        `bench: FAILED target: the Elasticsearch backfill reached ${target.ratio.toFixed(2)} × the SQLite backfill's behaviours/s, below --min-es-ratio ${target.min}\n`,
      );
      process.exitCode = 1;
    }
  } catch (err) {
    // A BenchFailure says what went wrong; anything else is a bug or an environment problem: keep its stack.
    const text = err instanceof BenchFailure ? err.message : ((err as Error).stack ?? String(err));
    process.stderr.write(`bench: FAILED (no report): ${text}\n`);
    process.exitCode = 1;
  } finally {
    clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

try {
  await main();
} finally {
  finished = true;
}
