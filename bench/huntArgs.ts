/** Command-line flags of `npm run bench:hunt`. */
import { outOption, parseFlags, positiveInt, seedOption } from './args.js';

/** Options of one hunting-reads benchmark run, after validation. */
export interface HuntBenchOptions {
  /** Behaviours in the store (built once, reused while its manifest matches). */
  behaviours: number;
  seed: number | string;
  /** Timed runs of each read. */
  runs: number;
  /** Directory of the store and its manifest (default bench/out/hunt). */
  out: string | undefined;
  json: boolean;
  help: boolean;
}

/** Usage text printed by `--help`. */
export const HUNT_HELP = `Usage: npm run bench:hunt -- [options]

Times the hunting reads of the SQLite store (Store.hunt) against the 200 ms target. The store
(<out>/hunt.db) holds N small behaviours made from the synthetic generator's records (its pivot
pools, so values repeat as on the feed; 1 to 4 sandboxes per file; analysis dates over 30 days;
the long behaviour lists dropped), written through the real SqliteSink in chunks of 500. It is
built once and reused while <out>/hunt-manifest.json matches the options. Then each read runs
--runs times: pivotStats of the most and of a least frequent value of every kind, top of every
kind with and without since (the last 24 hours), related for three behaviours, and fileRollup
by SHA-256, MD5 and SHA-1; the median and p95 are printed in ms.

  --behaviours N   behaviours in the store (default 1000000)
  --seed S         generator seed, integer or string (default 1)
  --runs N         timed runs of each read (default 7)
  --out DIR        directory of the store and its manifest (default bench/out/hunt)
  --json           print the figures as one JSON object on stdout (progress on stderr;
                   use npm run -s so npm's own banner stays off stdout)
  -h, --help       show this help

Exit codes: 0 every read answered (times are reported, never asserted), 1 a read failed or
answered nothing for a value the store holds, 2 usage error.
`;

/** Parses argv (without node and script); throws UsageError on unknown or malformed flags. */
export function parseHuntArgs(argv: string[]): HuntBenchOptions {
  const values = parseFlags(argv, {
    behaviours: { type: 'string' },
    seed: { type: 'string' },
    runs: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  return {
    behaviours: positiveInt('behaviours', values.behaviours, 1_000_000),
    seed: seedOption(values.seed),
    runs: positiveInt('runs', values.runs, 7),
    out: outOption(values.out),
    json: values.json ?? false,
    help: values.help ?? false,
  };
}
