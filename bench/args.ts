/** Command-line flags of `npm run bench`. */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfig } from '../src/config/index.js';

/** The settings' own defaults: the workers get them unless a flag says otherwise. */
const SETTINGS = loadConfig({ env: {} });

/** Options of one benchmark run, after validation. */
export interface BenchOptions {
  /** Uncompressed size of the synthetic feed, in MB (10^6 bytes). */
  mb: number;
  seed: number | string;
  perMinute: number;
  /** Keep the end-to-end SQLite file after a successful run (it is deleted otherwise). */
  keep: boolean;
  /** Leave out the backfill into Elasticsearch (and the node it starts). */
  skipElasticsearch: boolean;
  /** The least behaviours/s of the Elasticsearch backfill, as a share of the SQLite one's; missed fails the run (0: not judged). */
  minEsRatio: number;
  /** Directory for the feed, the SQLite file and the worker logs (default bench/out). */
  out: string | undefined;
  /** The whole run is given up (non-zero exit) after this many seconds. */
  timeoutSeconds: number;
  json: boolean;
  feedConcurrency: number;
  indexConcurrency: number;
  /** Feed and index worker processes of the e2e phase. */
  feedWorkers: number;
  indexWorkers: number;
  help: boolean;
}

/** Usage text printed by `--help`. */
export const HELP = `Usage: npm run bench -- [options]

Measures, in one run, on a synthetic feed under <out>/feed (generated, or reused when its
manifest matches the options):
  raw         bzip2 decode (the pipeline's decoder on every core) + line split + JSON.parse, in process
  normalize   the same with normalizeLine instead of JSON.parse, in process
  official    the official GTI Python client's read loop: per minute file, bz2.decompress of
              the whole file, then json.loads of each line (bench/official_read_loop.py, run
              with python3; skipped with a note when there is no python3)
  store floor the least a pipeline storing the feed does on two threads: the pipeline's
              decoder, line split, JSON.parse, each line's own bytes inserted by id into
              SQLite from a worker thread (bench/storeFloor.mjs; <out>/floor.db, removed after)
  normalize (CLI)
              node dist/src/cli/run.js normalize FILE... > /dev/null, start-up included (its
              rejections on stderr must be the feed's planted malformed lines)
  e2e         Redis (a private redis-server, or REDIS_URL's under a queue prefix of its own),
              feed worker and index worker processes, backfill into a fresh SQLite file
              (<out>/e2e.db), timed from enqueue to all jobs done; Redis used_memory is
              sampled against the raw bytes of the records waiting in the index queue
  backfill    the CLI as users run it, start-up and teardown included:
              node dist/src/cli/run.js backfill --source dir:<out>/feed
                --store sqlite:<out>/backfill.db --json
              (runs npm run build first when dist/ is missing or older than src/; starts its
              own redis-server unless REDIS_URL is set, which is passed through)
  backfill es  the same command into a real Elasticsearch node, --store es:<url> with an index
              prefix of its own: the node is started from the distribution the tests use
              (scripts/elasticsearch/pom.xml, 1 GB heap) and warmed up by the same backfill into
              throwaway prefixes until its CPU per run settles (within 10%, 4 runs at most), or
              ELASTICSEARCH_URL's cluster is used;
              reports docs/s, MB/s and primary bytes per behaviour (as written, and merged to
              one segment) beside the SQLite file's bytes per behaviour
and prints throughput, peak RSS per process, Redis memory per queued record and the ratios to
raw, official and the store floor, then checks that both SQLite stores hold exactly the feed's expected ids.

  --mb N                    uncompressed feed size in MB (default 200)
  --seed S                  generator seed, integer or string (default 1)
  --per-minute N            lines per minute file (default 400)
  --feed-concurrency N      SANDTRAIL_FEED_CONCURRENCY of the feed worker (default ${SETTINGS.feed.concurrency}, the setting's)
  --index-concurrency N     SANDTRAIL_INDEX_CONCURRENCY of the index worker (default ${SETTINGS.index.concurrency}, the setting's)
  --feed-workers N          feed worker processes in the e2e phase (default 1)
  --index-workers N         index worker processes in the e2e phase (default 1)
  --keep                    keep <out>/e2e.db and <out>/backfill.db (deleted by default), and the
                            Elasticsearch phase's indices
  --skip-elasticsearch      leave out the backfill es phase
  --min-es-ratio R          the backfill es phase must reach R × the SQLite backfill's behaviours/s,
                            or the run fails after its report (default 0.5; 0: not judged, as on
                            feeds so small that the node's start-up and setup dominate)
  --out DIR                 directory for the feed, the SQLite files, worker logs and
                            redis-memory.csv (default bench/out)
  --timeout S               give the whole run up after S seconds, exit 1 (default 1800)
  --json                    print the figures as one JSON object on stdout (progress on stderr;
                            use npm run -s so npm's own banner stays off stdout)
  -h, --help                show this help

Exit codes: 0 ok (report printed, ids verified), 1 a phase did not complete or the
verification failed (the reason on stderr), 2 usage error.
`;

/** Thrown for bad flags; the caller prints it with the help hint and exits 2. */
export class UsageError extends Error {}

/** `--name`'s value as a positive integer, or `fallback` when absent; UsageError otherwise. */
export function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(n) || n < 1)
    throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

/** Strict flags, no positionals: parseArgs's values, or a UsageError naming the bad flag. */
export function parseFlags<const O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  try {
    return parseArgs<{ args: string[]; strict: true; allowPositionals: false; options: O }>({
      args: argv,
      strict: true,
      allowPositionals: false,
      options,
    }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `--out` as given (undefined: the default directory); a blank one is a usage error. */
export function outOption(raw: string | undefined): string | undefined {
  if (raw !== undefined && raw.trim() === '') throw new UsageError('--out must name a directory');
  return raw;
}

/** `--seed` (default 1): integers stay numbers, so manifests record the seed `gen:feed --seed` would. */
export function seedOption(raw: string | undefined): number | string {
  const seed = raw ?? '1';
  return /^-?\d+$/.test(seed) ? Number(seed) : seed;
}

/** Parses argv (without node and script); throws UsageError on unknown or malformed flags. */
export function parseBenchArgs(argv: string[]): BenchOptions {
  const values = parseFlags(argv, {
    mb: { type: 'string' },
    seed: { type: 'string' },
    'per-minute': { type: 'string' },
    'feed-concurrency': { type: 'string' },
    'index-concurrency': { type: 'string' },
    'feed-workers': { type: 'string' },
    'index-workers': { type: 'string' },
    keep: { type: 'boolean', default: false },
    'skip-elasticsearch': { type: 'boolean', default: false },
    'min-es-ratio': { type: 'string' },
    out: { type: 'string' },
    timeout: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  const mb = values.mb === undefined ? 200 : Number(values.mb);
  const minEsRatio = values['min-es-ratio'] === undefined ? 0.5 : Number(values['min-es-ratio']);
  if (!(Number.isFinite(minEsRatio) && minEsRatio >= 0)) {
    throw new UsageError(`--min-es-ratio must be a number from 0, got ${JSON.stringify(values['min-es-ratio'])}`);
  }
  if (!(Number.isFinite(mb) && mb > 0)) throw new UsageError(`--mb must be a positive number, got ${JSON.stringify(values.mb)}`);
  return {
    mb,
    seed: seedOption(values.seed),
    perMinute: positiveInt('per-minute', values['per-minute'], 400),
    feedConcurrency: positiveInt('feed-concurrency', values['feed-concurrency'], SETTINGS.feed.concurrency),
    indexConcurrency: positiveInt('index-concurrency', values['index-concurrency'], SETTINGS.index.concurrency),
    feedWorkers: positiveInt('feed-workers', values['feed-workers'], 1),
    indexWorkers: positiveInt('index-workers', values['index-workers'], 1),
    keep: values.keep ?? false,
    skipElasticsearch: values['skip-elasticsearch'] ?? false,
    minEsRatio,
    out: outOption(values.out),
    timeoutSeconds: positiveInt('timeout', values.timeout, 1800),
    json: values.json ?? false,
    help: values.help ?? false,
  };
}

/** `parse` of this process's arguments, or undefined once a usage error is printed (exit code 2) for `npm run <name>`. */
export function argsOrUsage<T>(name: string, parse: (argv: string[]) => T): T | undefined {
  try {
    return parse(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${name}: ${err.message}\n(see npm run ${name} -- --help)\n`);
    process.exitCode = 2;
    return undefined;
  }
}
