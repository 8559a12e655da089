/** Command-line flags of `npm run bench:hunt`. */
import { outOption, parseFlags, positiveInt, seedOption, UsageError } from './args.js';
import { TARGET_MS } from './huntReads.js';

/** `--name`'s value as a number from 0; UsageError otherwise. */
function nonNegative(name: string, raw: string): number {
  const n = Number(raw);
  if (raw.trim() === '' || !(Number.isFinite(n) && n >= 0))
    throw new UsageError(`--${name} must be a number from 0, got ${JSON.stringify(raw)}`);
  return n;
}

/** Options of one hunting-reads benchmark run, after validation. */
export interface HuntBenchOptions {
  /** Behaviours in the store (built once, reused while its manifest matches). */
  behaviours: number;
  seed: number | string;
  /** Timed runs of each read. */
  runs: number;
  /** Directory of the store and its manifest (default bench/out/hunt). */
  out: string | undefined;
  store: 'sqlite' | 'es';
  /** A read whose p95 is past this fails the run; 0: not judged. */
  maxP95Ms: number;
  json: boolean;
  help: boolean;
}

/** Usage text printed by `--help`. */
export const HUNT_HELP = `Usage: npm run bench:hunt -- [options]

Times the hunting reads of a store (Store.hunt, what serve's read API and the CLI answer from).
The store holds N small behaviours made from the synthetic generator's records (its pivot pools,
so values repeat as on the feed; 1 to 4 sandboxes per file; analysis dates over 30 days; the
long behaviour lists dropped), written through the store's real sink:
  sqlite  <out>/hunt.db, chunks of 500; built once and reused while <out>/hunt-manifest.json
          matches the options. Target 200 ms, reported.
  es      a node of the bench's own (the distribution the tests use, 1 GB heap), or
          ELASTICSEARCH_URL's cluster, under an index prefix of the run's own (deleted after);
          chunks of 500, two calls in flight, built at every run (30 day indices). Target
          500 ms, judged: a read past it fails the run. Also prints the primary bytes per
          behaviour of the day indices and of the locator.
Then each read runs once (its time printed as "first": the store's caches filled for the first
time, as after a restart or, on Elasticsearch, a refresh) and --runs times more, timed:
pivotStats of the most and of a least frequent value of every kind, top of every kind with and
without since (the last 24 hours), related for three behaviours, and fileRollup by SHA-256, MD5
and SHA-1; the median and p95 of the timed runs are printed in ms.

  --behaviours N   behaviours in the store (default 1000000)
  --seed S         generator seed, integer or string (default 1)
  --runs N         timed runs of each read (default 7)
  --out DIR        directory of the SQLite store and its manifest (default bench/out/hunt)
  --store KIND     sqlite (default) or es
  --max-p95-ms N   fail the run when a read's p95 is past N ms (default 500 with --store es,
                   0 = not judged with sqlite)
  --json           print the figures as one JSON object on stdout (progress on stderr;
                   use npm run -s so npm's own banner stays off stdout)
  -h, --help       show this help

Exit codes: 0 every read answered within --max-p95-ms, 1 a read failed, answered wrong for a
value the store holds, or was past --max-p95-ms, 2 usage error.
`;

/** Parses argv (without node and script); throws UsageError on unknown or malformed flags. */
export function parseHuntArgs(argv: string[]): HuntBenchOptions {
  const values = parseFlags(argv, {
    behaviours: { type: 'string' },
    seed: { type: 'string' },
    runs: { type: 'string' },
    out: { type: 'string' },
    store: { type: 'string' },
    'max-p95-ms': { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  const store = values.store ?? 'sqlite';
  if (store !== 'sqlite' && store !== 'es') throw new UsageError(`--store must be sqlite or es, got ${JSON.stringify(store)}`);
  const max = values['max-p95-ms'];
  return {
    store,
    maxP95Ms: max === undefined ? (store === 'es' ? TARGET_MS.es : 0) : nonNegative('max-p95-ms', max),
    behaviours: positiveInt('behaviours', values.behaviours, 1_000_000),
    seed: seedOption(values.seed),
    runs: positiveInt('runs', values.runs, 7),
    out: outOption(values.out),
    json: values.json ?? false,
    help: values.help ?? false,
  };
}
