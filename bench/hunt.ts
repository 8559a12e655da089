/**
 * `npm run bench:hunt`: how long the hunting reads of the SQLite store take on a store of N
 * behaviours, against the 200 ms target. Times are reported, never asserted: only a read that
 * fails (or answers nothing for a value the store holds) fails the run. See `--help`.
 */
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from '../src/store/index.js';
import { argsOrUsage } from './args.js';
import { HUNT_HELP, parseHuntArgs, type HuntBenchOptions } from './huntArgs.js';
import { measure, plan, TARGET_MS, type ReadResult } from './huntReads.js';
import { prepareHuntStore, type HuntStoreInfo } from './huntStore.js';
import { machineOf } from './util.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg: string): void => void process.stderr.write(`bench:hunt: ${msg}\n`);

function text(store: HuntStoreInfo, o: HuntBenchOptions, reads: ReadResult[]): string {
  const b = store.build;
  const rows = reads.map((r) => [
    r.read,
    r.error ? `FAILED: ${r.error}` : (r.result ?? ''),
    r.medianMs?.toFixed(1) ?? '-',
    r.p95Ms?.toFixed(1) ?? '-',
    r.withinTarget === null ? '-' : r.withinTarget ? 'yes' : 'no',
  ]);
  const head = ['read', 'answer', 'median ms', 'p95 ms', `p95 ≤ ${TARGET_MS} ms`];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i >= 2 ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number))).join('  ');
  return [
    `hunting reads: ${store.behaviours} behaviours of ${store.files} files in ${store.file}, ${o.runs} runs each`,
    `build${store.reused ? ' (reused; figures of the run that built it)' : ''}: ${b.seconds} s, ${b.perSecond} behaviours/s ` +
      `(sink upserts alone: ${b.sinkSeconds} s, ${b.sinkPerSecond}/s), ${b.jsonMB} MB of JSON, store ${b.dbMB} MB`,
    '',
    line(head),
    ...rows.map(line),
  ].join('\n');
}

async function main(): Promise<void> {
  const o = argsOrUsage('bench:hunt', parseHuntArgs);
  if (o === undefined) return;
  if (o.help) return void process.stdout.write(HUNT_HELP);
  const out = o.out === undefined ? join(ROOT, 'bench', 'out', 'hunt') : resolve(o.out);
  const loadAtStart = loadavg()[0] ?? 0;
  if (loadAtStart > 0.5) say(`note: 1-minute load average is ${loadAtStart.toFixed(2)}: times will be longer than on an idle machine`);
  const store = await prepareHuntStore(out, o, say);
  if (!store.reused)
    say(`built in ${store.build.seconds} s: ${store.build.perSecond} behaviours/s (sink alone ${store.build.sinkPerSecond}/s)`);
  say('picking the values to read (most and least frequent of each kind)...');
  const reads = plan(store.file);
  const s = openSqliteStore(store.file);
  let results: ReadResult[];
  try {
    say(`timing ${reads.length} reads, ${o.runs} runs each...`);
    results = await measure(s.hunt, reads, o.runs);
  } finally {
    await s.close();
  }
  const failed = results.filter((r) => r.error);
  const report = {
    machine: machineOf(loadAtStart),
    store,
    runs: o.runs,
    targetMs: TARGET_MS,
    reads: results,
  };
  process.stdout.write(o.json ? `${JSON.stringify(report)}\n` : `\n${text(store, o, results)}\n`);
  if (failed.length > 0) {
    process.stderr.write(`bench:hunt: FAILED: ${failed.length} read(s) failed: ${failed.map((r) => r.read).join(', ')}\n`);
    process.exitCode = 1;
  }
}

await main();
