/**
 * `npm run bench:hunt`: how long the hunting reads take on a store of N behaviours, SQLite
 * (against 200 ms, reported) or Elasticsearch (against 500 ms, judged by --max-p95-ms). A read
 * that fails, or answers wrong for a value the store holds, fails the run. See `--help`.
 */
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStore } from '../src/store/index.js';
import { argsOrUsage } from './args.js';
import { HUNT_HELP, parseHuntArgs, type HuntBenchOptions } from './huntArgs.js';
import { startBenchElasticsearch } from './elasticsearch.js';
import { esPicks, sqlitePicks } from './huntPicks.js';
import { measure, plan, TARGET_MS, type ReadResult } from './huntReads.js';
import { buildEsHuntStore } from './huntStoreEs.js';
import { prepareHuntStore, type HuntStoreInfo } from './huntStore.js';
import { machineOf } from './util.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg: string): void => void process.stderr.write(`bench:hunt: ${msg}\n`);

function text(store: HuntStoreInfo, o: HuntBenchOptions, reads: ReadResult[], target: number): string {
  const b = store.build;
  const rows = reads.map((r) => [
    r.read,
    r.error ? `FAILED: ${r.error}` : (r.result ?? ''),
    r.firstMs?.toFixed(1) ?? '-',
    r.medianMs?.toFixed(1) ?? '-',
    r.p95Ms?.toFixed(1) ?? '-',
    r.withinTarget === null ? '-' : r.withinTarget ? 'yes' : 'no',
  ]);
  const head = ['read', 'answer', 'first ms', 'median ms', 'p95 ms', `p95 ≤ ${target} ms`];
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

/** The store a run reads, timed: its description, the reads' figures, and what Elasticsearch's weighs. */
interface Timed {
  store: HuntStoreInfo;
  results: ReadResult[];
  elasticsearch?: { version: string; where: string; dayIndices: number; bytesPerBehaviour: { behaviours: number; locator: number } };
}

async function timeSqlite(o: HuntBenchOptions, target: number): Promise<Timed> {
  const out = o.out === undefined ? join(ROOT, 'bench', 'out', 'hunt') : resolve(o.out);
  const store = await prepareHuntStore(out, o, say);
  if (!store.reused)
    say(`built in ${store.build.seconds} s: ${store.build.perSecond} behaviours/s (sink alone ${store.build.sinkPerSecond}/s)`);
  say('picking the values to read (most and least frequent of each kind)...');
  const picks = sqlitePicks(store.file);
  const reads = await plan(picks).finally(() => picks.close());
  const s = openSqliteStore(store.file);
  try {
    say(`timing ${reads.length} reads, ${o.runs} runs each...`);
    return { store, results: await measure(s.hunt, reads, o.runs, target) };
  } finally {
    await s.close();
  }
}

async function timeElasticsearch(o: HuntBenchOptions, target: number): Promise<Timed> {
  const es = await startBenchElasticsearch(say);
  try {
    const built = await buildEsHuntStore(es, o, say);
    try {
      const b = built.info.build;
      say(`built in ${b.seconds} s: ${b.perSecond} behaviours/s, ${built.dayIndices} day indices`);
      say('picking the values to read (most and least frequent of each kind)...');
      const reads = await plan(esPicks(es.admin, es.prefix));
      say(`timing ${reads.length} reads, ${o.runs} runs each...`);
      const results = await measure(built.store.hunt, reads, o.runs, target);
      const { version, where } = es;
      return {
        store: built.info,
        results,
        elasticsearch: { version, where, dayIndices: built.dayIndices, bytesPerBehaviour: built.bytesPerBehaviour },
      };
    } finally {
      await built.store.close();
    }
  } finally {
    await es.drop();
    await es.stop();
  }
}

async function main(): Promise<void> {
  const o = argsOrUsage('bench:hunt', parseHuntArgs);
  if (o === undefined) return;
  if (o.help) return void process.stdout.write(HUNT_HELP);
  const loadAtStart = loadavg()[0] ?? 0;
  if (loadAtStart > 0.5) say(`note: 1-minute load average is ${loadAtStart.toFixed(2)}: times will be longer than on an idle machine`);
  const target = TARGET_MS[o.store];
  const { store, results, elasticsearch } = o.store === 'es' ? await timeElasticsearch(o, target) : await timeSqlite(o, target);
  const failed = results.filter((r) => r.error);
  const slow = o.maxP95Ms > 0 ? results.filter((r) => r.p95Ms !== null && r.p95Ms > o.maxP95Ms) : [];
  const report = {
    machine: machineOf(loadAtStart),
    store: { kind: o.store, ...store },
    ...(elasticsearch ? { elasticsearch } : {}),
    runs: o.runs,
    targetMs: target,
    maxP95Ms: o.maxP95Ms,
    reads: results,
  };
  const es = elasticsearch
    ? `\nElasticsearch ${elasticsearch.version} (${elasticsearch.where}), ${elasticsearch.dayIndices} day indices; primary bytes per behaviour: ` +
      `${elasticsearch.bytesPerBehaviour.behaviours} in the day indices, ${elasticsearch.bytesPerBehaviour.locator} in the locator`
    : '';
  process.stdout.write(o.json ? `${JSON.stringify(report)}\n` : `\n${text(store, o, results, target)}${es}\n`);
  if (failed.length > 0) {
    process.stderr.write(`bench:hunt: FAILED: ${failed.length} read(s) failed: ${failed.map((r) => r.read).join(', ')}\n`);
    process.exitCode = 1;
  }
  if (slow.length > 0) {
    process.stderr.write(
      `bench:hunt: FAILED target: ${slow.length} read(s) past p95 ${o.maxP95Ms} ms: ${slow.map((r) => `${r.read} ${r.p95Ms} ms`).join(', ')}\n`,
    );
    process.exitCode = 1;
  }
}

await main();
