/**
 * `npm run bench:retention`: what retention costs the SQLite store against what writing costs it.
 * A fresh store is filled with N behaviours made by the synthetic generator (full-size reports)
 * spread over D days of `last_modification_date`, written through the real SqliteSink in chunks;
 * then one more day is written, the oldest day pruned through Store.retention in the index
 * stage's steps, and last a day written into a store of its own (the cost of a write into a store
 * that holds nothing else: the store being split by day, writing a day into the full store should
 * cost about as much). Printed per phase: behaviours/s, bytes written per behaviour
 * (this process's write_bytes in /proc/self/io: the WAL and a checkpoint closing each phase) and
 * the file size (with its WAL). Figures are reported, never asserted; the run fails only when the
 * store does not end with what it should.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { normalizeRecord } from '../src/normalize/index.js';
import { openSqliteStore } from '../src/store/index.js';
import { sinkDocOf, type SinkDoc } from '../src/wire/index.js';
import { Rng, createPivotPools, generateRecord } from '../src/synth/index.js';
import { UsageError, outOption, parseFlags, positiveInt } from './args.js';
import { processWriteBytes, sqliteFileBytes } from './util.js';

const HELP = `Usage: npm run bench:retention -- [options]

Fills a fresh SQLite store (<out>/retention.db) with N behaviours over D days through the real
sink, writes one more day, prunes the oldest day in retention's steps (retention.stepRows), then
writes a day into a store of its own (<out>/one-day.db: the cost of a write into a store holding
nothing else, which a store split by day should match), and prints behaviours/s, bytes written per behaviour and the file size
of each phase.

  --behaviours N   behaviours in the store before the timed phases (default 60000)
  --days D         days their last_modification_date spans (default 30)
  --step-rows N    rows per retention step (default 2000, as retention.stepRows)
  --out DIR        directory of the store (default bench/out/retention)
  --json           one JSON object on stdout
  -h, --help       show this help

Exit codes: 0 done (figures are reported, not asserted), 1 the store did not end as it should,
2 usage error.
`;

const CHUNK = 500;
const DAY = 86_400;
/** 2026-11-01T00:00:00Z: day 0 of the store. */
const T0 = 1_793_491_200;
const say = (msg: string): void => void process.stderr.write(`bench:retention: ${msg}\n`);
const written = processWriteBytes;

interface Phase {
  phase: string;
  behaviours: number;
  seconds: number;
  perSecond: number;
  kibWrittenPerBehaviour: number;
  fileMB: number;
}

async function main(): Promise<void> {
  let o;
  try {
    const v = parseFlags(process.argv.slice(2), {
      behaviours: { type: 'string' },
      days: { type: 'string' },
      'step-rows': { type: 'string' },
      out: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    });
    if (v.help) return void process.stdout.write(HELP);
    o = {
      behaviours: positiveInt('--behaviours', v.behaviours, 60_000),
      days: positiveInt('--days', v.days, 30),
      stepRows: positiveInt('--step-rows', v['step-rows'], 2000),
      out: outOption(v.out) ?? resolve('bench', 'out', 'retention'),
      json: v.json,
    };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench:retention: ${err.message}\n${HELP}`);
    process.exitCode = 2;
    return;
  }
  mkdirSync(o.out, { recursive: true });
  const file = join(o.out, 'retention.db');
  // one day alone in a store of its own: what the day's partition would hold if the store were split by day
  const dayFile = join(o.out, 'one-day.db');
  for (const f of [file, dayFile]) for (const s of ['', '-wal', '-shm']) rmSync(f + s, { force: true });
  const rng = new Rng(7);
  const pools = createPivotPools(7);
  let serial = 0;
  // n behaviours of day `day`, each a new file (a unique SHA-256 from a counter)
  const day = (d: number, n: number): SinkDoc[] =>
    Array.from({ length: n }, (_, i) => {
      const sha = (serial++).toString(16).padStart(64, '0');
      const r = generateRecord(rng, { pools, lastModificationDate: T0 + d * DAY + Math.floor((i * DAY) / n) });
      (r as { id: string }).id = `${sha}_${String(r.id).split('_').slice(1).join('_')}`;
      const x = normalizeRecord(r);
      if (!x.ok) throw new Error(`generator record rejected: ${x.rejection.code}`);
      return sinkDocOf(x.doc);
    });
  const store = openSqliteStore(file);
  const dayStore = openSqliteStore(dayFile);
  const checkpoints = new Map([file, dayFile].map((f) => [f, new BetterSqlite3(f)]));
  const phases: Phase[] = [];
  const timed = async (phase: string, work: () => Promise<number>, target = file): Promise<void> => {
    const w = written();
    const t = process.hrtime.bigint();
    const n = await work();
    // the phase's pages reach the file at a checkpoint: force it, so each phase pays its own
    checkpoints.get(target)?.pragma('wal_checkpoint(TRUNCATE)');
    const seconds = Number(process.hrtime.bigint() - t) / 1e9;
    const p = {
      phase,
      behaviours: n,
      seconds: Math.round(seconds * 100) / 100,
      perSecond: Math.round(n / seconds),
      kibWrittenPerBehaviour: Math.round(((written() - w) / Math.max(n, 1) / 1024) * 10) / 10,
      // the WAL holds what a checkpoint has not copied into the file yet
      fileMB: Math.round(sqliteFileBytes(target) / 1e5) / 10,
    };
    phases.push(p);
    say(
      `${phase}: ${n} behaviours in ${p.seconds} s (${p.perSecond}/s), ${p.kibWrittenPerBehaviour} KiB written each, file ${p.fileMB} MB`,
    );
  };
  const write = async (docs: SinkDoc[], into = store): Promise<number> => {
    for (let i = 0; i < docs.length; i += CHUNK) await into.sink.upsert(docs.slice(i, i + CHUNK));
    return docs.length;
  };
  const perDay = Math.max(1, Math.floor(o.behaviours / o.days));
  try {
    await timed('fill', async () => {
      let n = 0;
      for (let d = 0; d < o.days; d++) n += await write(day(d, perDay));
      return n;
    });
    await timed('write one more day', async () => write(day(o.days, perDay)));
    await timed('prune the oldest day', async () => {
      let n = 0;
      for (;;) {
        const r = await store.retention.prune({ behavioursBefore: T0 + DAY, maxRows: o.stepRows });
        n += r.behaviours;
        if (r.done) return n;
      }
    });
    await timed('write one more day into a store of its own', async () => write(day(o.days + 1, perDay), dayStore), dayFile);
    const held = await store.sink.count();
    if (held !== perDay * o.days) throw new Error(`the store holds ${held} behaviours, not ${perDay * o.days}`);
  } finally {
    for (const c of checkpoints.values()) c.close();
    await store.close();
    await dayStore.close();
  }
  const [, add, prune, alone] = phases;
  const ratio = (x?: Phase): number | null =>
    x && add ? Math.round((x.kibWrittenPerBehaviour / add.kibWrittenPerBehaviour) * 100) / 100 : null;
  const ratios = { pruneToWriteBytes: ratio(prune), dayAloneToWriteBytes: ratio(alone) };
  if (o.json) process.stdout.write(`${JSON.stringify({ store: file, days: o.days, perDay, phases, ...ratios })}\n`);
  else
    process.stdout.write(
      `pruning a day writes ${ratios.pruneToWriteBytes}x the bytes per behaviour that writing a day into the store does; writing it into a store of its own ${ratios.dayAloneToWriteBytes}x\n`,
    );
}

await main().catch((err: unknown) => {
  say(`FAILED: ${(err as Error).message}`);
  process.exitCode = 1;
});
