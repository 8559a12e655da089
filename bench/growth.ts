/**
 * `npm run bench:growth`: whether the SQLite store's write cost stays flat as it grows. One store
 * is filled through the real sink in the feed's order (last_modification_date rising at
 * --per-day behaviours a day, so each day's partition fills and closes as on the live feed), and
 * at each size of --sizes the run stops to read its figures: upserts/s over the stretch before
 * it, bytes written so far (this process's write_bytes in /proc/self/io, the WAL checkpointed
 * first) against the file's size, and the hunting reads' medians. Sizes not reached within
 * --budget-s are extrapolated from the last two measured. See `--help`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { openSqliteStore, type Store } from '../src/store/index.js';
import type { SinkDoc } from '../src/wire/index.js';
import { UsageError, argsOrUsage, outOption, parseFlags, positiveInt } from './args.js';
import { BenchFailure } from './failure.js';
import { sqlitePicks } from './huntPicks.js';
import { measure, plan, TARGET_MS, type ReadResult } from './huntReads.js';
import { HUNT_END, huntDocs, round } from './huntStore.js';
import { machineOf, processWriteBytes, sqliteFileBytes } from './util.js';

const HELP = `Usage: npm run bench:growth -- [options]

Fills one SQLite store (<out>/growth.db, made afresh) through the real sink with behaviours of
the synthetic generator (whole records, ~14 KB of JSON as feed reports are; --slim: only their
hunting fields, ~2 KB, as npm run bench:hunt stores them), in the feed's order: last_modification_date rises at --per-day behaviours a day. At each size of --sizes it
stops and prints: upserts/s of the sink over the last tenth before that size, bytes written so
far per behaviour and in all (write_bytes of /proc/self/io, after a WAL checkpoint), the file
size, and the median of each hunting read (those of npm run bench:hunt). Sizes the build does not
reach within --budget-s are extrapolated from the last two it reached, and said so.

Targets (the run exits 1 when one is missed): upserts/s at the largest size reached at least
0.5x the rate at the first size; bytes written in all at most 10x the file's size.

  --sizes LIST     sizes to stop at, ascending (default 100000,1000000,10000000)
  --per-day N      behaviours per day of last_modification_date (default 1000000)
  --chunk N        documents per sink call (default 8000: the largest commit of the index stage,
                   16 chunks of 500 ready together, as in a backfill on a fleet)
  --slim           hunting fields only (a store ~4x smaller for the same count)
  --page-size N    SQLite page size of the fresh store (default: the one a new store gets)
  --budget-s S     seconds of building (reads excluded) after which the build stops where it is,
                   measures that size and extrapolates the larger ones (default 3600)
  --runs N         timed runs of each read (default 3)
  --out DIR        directory of the store (default bench/out/growth)
  --keep           keep the store afterwards (default: removed)
  --json           one JSON object on stdout
  -h, --help       show this help

Exit codes: 0 targets met, 1 a target missed or a read failed, 2 usage error.
`;

const say = (msg: string): void => void process.stderr.write(`bench:growth: ${msg}\n`);
const DAY = 86_400;

interface Options {
  sizes: number[];
  perDay: number;
  chunk: number;
  pageSize: number | undefined;
  slim: boolean;
  budgetS: number;
  runs: number;
  out: string;
  keep: boolean;
  json: boolean;
}

/** The figures at one size. */
export interface SizeFigures {
  behaviours: number;
  /** Partitions (days) the store holds. */
  days: number;
  /** Sink upserts per second over the last tenth before this size. */
  upsertsPerSecond: number;
  /** Seconds of building so far (generation included). */
  buildSeconds: number;
  bytesWritten: number;
  bytesWrittenPerBehaviour: number;
  fileBytes: number;
  /** Bytes written so far over the file's size. */
  writeAmplification: number;
  readMedianMs: Record<string, number | null>;
  /** Measured, or extrapolated from the two sizes before (log-linear in the size). */
  measured: boolean;
}

function parse(argv: string[]): Options | 'help' {
  const f = parseFlags(argv, {
    sizes: { type: 'string' },
    'per-day': { type: 'string' },
    chunk: { type: 'string' },
    'page-size': { type: 'string' },
    slim: { type: 'boolean', default: false },
    'budget-s': { type: 'string' },
    runs: { type: 'string' },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  });
  if (f.help) return 'help';
  const sizes = (f.sizes ?? '100000,1000000,10000000').split(',').map((s) => positiveInt('sizes', s.trim(), 0));
  if (sizes.some((s, i) => i > 0 && s <= (sizes[i - 1] as number))) throw new UsageError('--sizes must be ascending');
  return {
    sizes,
    perDay: positiveInt('per-day', f['per-day'], 1_000_000),
    chunk: positiveInt('chunk', f.chunk, 8000),
    slim: f.slim,
    pageSize: f['page-size'] === undefined ? undefined : positiveInt('page-size', f['page-size'], 0),
    budgetS: positiveInt('budget-s', f['budget-s'], 3600),
    runs: positiveInt('runs', f.runs, 3),
    out: outOption(f.out) ?? resolve('bench', 'out', 'growth'),
    keep: f.keep,
    json: f.json,
  };
}

/** Checkpoints the WAL into the file (so what it holds counts as written) and counts the store's days. */
function settle(file: string): number {
  const db = new BetterSqlite3(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    return db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name GLOB 'behaviours_[0-9]*'").pluck().get() as number;
  } finally {
    db.close();
  }
}

async function readsAt(
  file: string,
  store: Store,
  runs: number,
): Promise<{ medians: Record<string, number | null>; failed: ReadResult[] }> {
  const picks = sqlitePicks(file);
  let reads;
  try {
    reads = await plan(picks);
  } finally {
    await picks.close();
  }
  const results = await measure(store.hunt, reads, runs, TARGET_MS.sqlite, (m) => say(`  ${m}`));
  return {
    medians: Object.fromEntries(results.map((r) => [r.read.replace(/ \(\d+( reports)?\)$/, ''), r.medianMs])),
    failed: results.filter((r) => r.error),
  };
}

/** A figure at `size` from those at the two sizes before it, linear in log(size). */
function extrapolate(a: SizeFigures, b: SizeFigures, size: number, perDay: number): SizeFigures {
  const t = Math.log(size / b.behaviours) / Math.log(b.behaviours / a.behaviours);
  const at = (x: number, y: number): number => y + (y - x) * t;
  const perBehaviour = Math.max(0, at(a.bytesWrittenPerBehaviour, b.bytesWrittenPerBehaviour));
  const fileBytesAt = (b.fileBytes / b.behaviours) * size;
  return {
    behaviours: size,
    days: Math.ceil(size / perDay),
    upsertsPerSecond: Math.max(0, Math.round(at(a.upsertsPerSecond, b.upsertsPerSecond))),
    buildSeconds: round(b.buildSeconds * (size / b.behaviours), 0),
    bytesWritten: Math.round(perBehaviour * size),
    bytesWrittenPerBehaviour: Math.round(perBehaviour),
    fileBytes: Math.round(fileBytesAt),
    writeAmplification: round((perBehaviour * size) / fileBytesAt, 2),
    readMedianMs: {},
    measured: false,
  };
}

async function run(o: Options): Promise<{ sizes: SizeFigures[]; failures: string[] }> {
  mkdirSync(o.out, { recursive: true });
  const file = join(o.out, 'growth.db');
  for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  if (o.pageSize !== undefined) {
    // a page size is fixed by the first table: the store keeps it when it opens the file
    const db = new BetterSqlite3(file);
    db.pragma(`page_size = ${o.pageSize}`);
    db.exec('CREATE TABLE page_size_set (x); DROP TABLE page_size_set');
    db.close();
  }
  const last = o.sizes[o.sizes.length - 1] as number;
  const start = HUNT_END - Math.ceil(last / o.perDay) * DAY;
  const written0 = processWriteBytes();
  const figures: SizeFigures[] = [];
  const failures: string[] = [];
  let store = openSqliteStore(file);
  let written = 0;
  let chunk: SinkDoc[] = [];
  // after each sink call: behaviours written and the sink's milliseconds so far
  const marks: { written: number; sinkMs: number }[] = [{ written: 0, sinkMs: 0 }];
  let sinkMs = 0;
  // building time (generation and sink; not the stops' checkpoints and reads), for the budget
  let buildMs = 0;
  let resumed = performance.now();
  const flush = async (): Promise<void> => {
    const t = performance.now();
    const res = await store.sink.upsert(chunk);
    sinkMs += performance.now() - t;
    const bad = res.find((r) => r.status !== 'ok' || r.stale);
    if (bad) throw new BenchFailure(`the sink did not store ${bad.id}: ${JSON.stringify(bad)}`);
    written += chunk.length;
    marks.push({ written, sinkMs });
    chunk = [];
  };
  /** Upserts/s of the sink over the last tenth of what is written. */
  const rateNow = (): number => {
    const from = marks.findLast((m) => m.written <= written * 0.9) ?? { written: 0, sinkMs: 0 };
    return Math.round((written - from.written) / ((sinkMs - from.sinkMs) / 1000));
  };
  /** The figures at the current size: the store closed, so every write is on disk and counted. */
  const stop = async (): Promise<void> => {
    buildMs += performance.now() - resumed;
    await store.close();
    const days = settle(file);
    const bytes = processWriteBytes() - written0;
    const size = sqliteFileBytes(file);
    const rate = rateNow();
    say(
      `${written} behaviours after ${(buildMs / 1000).toFixed(0)} s of building: ${rate} upserts/s, ${(bytes / 1e9).toFixed(2)} GB written, file ${(size / 1e9).toFixed(2)} GB; timing the reads...`,
    );
    store = openSqliteStore(file);
    const reads = await readsAt(file, store, o.runs);
    for (const r of reads.failed) failures.push(`at ${written}: ${r.read} failed: ${r.error}`);
    figures.push({
      behaviours: written,
      days,
      upsertsPerSecond: rate,
      buildSeconds: round(buildMs / 1000, 1),
      bytesWritten: bytes,
      bytesWrittenPerBehaviour: Math.round(bytes / written),
      fileBytes: size,
      writeAmplification: round(bytes / size, 2),
      readMedianMs: reads.medians,
      measured: true,
    });
    resumed = performance.now();
  };
  try {
    let next = 0;
    const docs = huntDocs({ seed: 'growth', count: last, full: !o.slim, dateOf: (i) => start + Math.floor((i * DAY) / o.perDay) });
    for (const { doc } of docs) {
      chunk.push(doc);
      const target = o.sizes[next] as number;
      if (chunk.length < o.chunk && written + chunk.length < target) continue;
      await flush();
      const spent = (buildMs + performance.now() - resumed) / 1000 > o.budgetS;
      if (written >= target) await stop();
      else if (spent)
        await stop(); // the largest store this budget builds
      else continue;
      if (written >= target && ++next >= o.sizes.length) break;
      if (spent) {
        say(`the budget of ${o.budgetS} s is spent at ${written} behaviours: ${o.sizes.slice(next).join(', ')} extrapolated`);
        break;
      }
    }
  } finally {
    await store.close();
    if (!o.keep) for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
  for (const size of o.sizes.filter((s) => s > written)) {
    const [a, b] = figures.filter((f) => f.measured).slice(-2);
    if (a && b) figures.push(extrapolate(a, b, size, o.perDay));
  }
  return { sizes: figures, failures };
}

/** Left-aligned first column, right-aligned others. */
function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

function text(figures: SizeFigures[]): string {
  const sizes = table(
    ['behaviours', 'days', 'upserts/s', 'build s', 'written/beh.', 'written GB', 'file GB', 'written/file'],
    figures.map((f) => [
      `${f.behaviours}${f.measured ? '' : ' (extrapolated)'}`,
      String(f.days),
      String(f.upsertsPerSecond),
      String(f.buildSeconds),
      `${(f.bytesWrittenPerBehaviour / 1024).toFixed(1)} KiB`,
      (f.bytesWritten / 1e9).toFixed(2),
      (f.fileBytes / 1e9).toFixed(2),
      f.writeAmplification.toFixed(2),
    ]),
  );
  const measured = figures.filter((f) => f.measured);
  const reads = table(
    ['read: median ms at', ...measured.map((f) => String(f.behaviours))],
    Object.keys(measured[0]?.readMedianMs ?? {}).map((r) => [r, ...measured.map((f) => f.readMedianMs[r]?.toFixed(1) ?? '-')]),
  );
  return `${sizes}\n\n${reads}`;
}

async function main(): Promise<void> {
  const o = argsOrUsage('bench:growth', parse);
  if (o === undefined) return;
  if (o === 'help') return void process.stdout.write(HELP);
  const out = resolve(o.out);
  const loadAtStart = loadavg()[0] ?? 0;
  const { sizes, failures } = await run({ ...o, out });
  const first = sizes[0];
  const largest = sizes.filter((s) => s.measured).at(-1);
  const targets = {
    rateRatio: first && largest ? round(largest.upsertsPerSecond / first.upsertsPerSecond, 2) : null,
    rateRatioTarget: 0.5,
    writeAmplification: largest?.writeAmplification ?? null,
    writeAmplificationTarget: 10,
  };
  if (targets.rateRatio !== null && targets.rateRatio < 0.5)
    failures.push(`upserts/s at ${largest?.behaviours}: ${targets.rateRatio}x the rate at ${first?.behaviours} (target ≥ 0.5x)`);
  if (targets.writeAmplification !== null && targets.writeAmplification > 10)
    failures.push(`bytes written ${targets.writeAmplification}x the file's size at ${largest?.behaviours} (target ≤ 10x)`);
  const report = {
    machine: machineOf(loadAtStart),
    options: { ...o, out },
    sizes,
    targets,
    failures,
  };
  process.stdout.write(
    o.json
      ? `${JSON.stringify(report)}\n`
      : `\n${text(sizes)}\n\nlargest measured / first: ${targets.rateRatio}x the upserts/s (target ≥ 0.5); written / file: ${targets.writeAmplification}x (target ≤ 10)\n`,
  );
  if (failures.length > 0) {
    process.stderr.write(`bench:growth: FAILED: ${failures.join('; ')}\n`);
    process.exitCode = 1;
  }
}

await main();
