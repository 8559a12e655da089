/**
 * `npm run bench:export`: does `sandtrail export` stay a stream? A SQLite store holds two clusters
 * (two behash values) of full-size synthetic reports, a small and a large one; the compiled CLI
 * exports each, in each format, to a file, and its peak RSS is sampled. Memory must not grow with
 * the cluster: the large export's peak over the small one's is judged (`--max-rss-ratio`).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { normalizeRecord } from '../src/normalize/index.js';
import { openStore } from '../src/store/index.js';
import { Rng, generateRecord } from '../src/synth/index.js';
import { sinkDocOf, type SinkDoc } from '../src/wire/index.js';
import { ensureBuilt } from './build.js';
import { childCpuSeconds, TreeSampler } from './procs.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const HELP = `Usage: npm run bench:export -- [options]

Builds (or reuses) <out>/export.db: a SQLite store of full-size synthetic reports in two
clusters, --small behaviours sharing one behash and --large sharing another, then runs the
compiled CLI, \`node dist/src/cli/run.js export --behash V --format F --out FILE --json\`, for
each cluster and format, timed from spawn to exit with its peak RSS sampled every 50 ms.
Prints behaviours/s, MB/s written, CPU-s and peak RSS of each run, and the large/small RSS
ratio per format; exits 1 when a ratio is above --max-rss-ratio or an export misses a behaviour.

  --small N            behaviours of the small cluster (default 10000)
  --large N            behaviours of the large cluster (default 100000)
  --max-rss-ratio R    the large export's peak RSS over the small one's, at most (default 1.5;
                       0: printed, not judged, as for clusters too small to fill the window of
                       ids an export remembers, 200,000)
  --out DIR            working directory (default bench/out/export); the store is reused while
                       its manifest matches, the export files are removed after each run
  --json               the figures as one JSON object on stdout
  -h, --help`;

interface Run {
  cluster: string;
  format: string;
  behaviours: number;
  objects: number;
  seconds: number;
  cpuSeconds: number;
  bytes: number;
  peakMb: number;
}

const say = (m: string): void => void process.stderr.write(`bench:export: ${m}\n`);

async function buildStore(db: string, small: number, large: number): Promise<void> {
  const manifest = `${db}.manifest.json`;
  const want = JSON.stringify({ small, large, version: 1 });
  if (existsSync(db) && existsSync(manifest) && readFileSync(manifest, 'utf8') === want) {
    say(`reusing ${db}`);
    return;
  }
  for (const f of [db, `${db}-wal`, `${db}-shm`, manifest]) rmSync(f, { force: true });
  say(`building ${db}: ${small} + ${large} full-size synthetic reports...`);
  const store = openStore(`sqlite:${db}`);
  const rng = new Rng('bench-export');
  const t0 = performance.now();
  try {
    let batch: SinkDoc[] = [];
    for (let i = 0; i < small + large; i++) {
      const r = generateRecord(rng, { big: false, lastModificationDate: 1_793_491_200 + i * 3 });
      r.attributes.behash = i < small ? 'small-cluster' : 'large-cluster';
      const n = normalizeRecord(r);
      if (!n.ok) throw new Error(`a generated report was refused: ${n.rejection.message}`);
      batch.push(sinkDocOf(n.doc));
      if (batch.length === 500) {
        await store.sink.upsert(batch);
        batch = [];
      }
    }
    if (batch.length) await store.sink.upsert(batch);
  } finally {
    await store.close();
  }
  writeFileSync(manifest, want);
  say(`built in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${(statSync(db).size / 1e6).toFixed(0)} MB`);
}

async function exportOnce(db: string, cluster: string, format: string, file: string): Promise<Run> {
  const args = [
    'dist/src/cli/run.js',
    'export',
    '--behash',
    cluster,
    '--format',
    format,
    '--out',
    file,
    '--json',
    '--store',
    `sqlite:${db}`,
  ];
  const sampler = new TreeSampler(50);
  const cpu0 = childCpuSeconds();
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  if (child.pid === undefined) throw new Error('could not spawn the CLI');
  sampler.name(child.pid, 'export');
  sampler.start();
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number | null>((res) => child.once('close', res));
  const seconds = (performance.now() - t0) / 1000;
  const peak = sampler.stop().find((p) => p.role === 'export');
  if (code !== 0) throw new Error(`export ${cluster} ${format} exited ${code}`);
  const summary = JSON.parse(out.trim()) as { behaviours: number; objects: number };
  const bytes = statSync(file).size;
  rmSync(file, { force: true });
  return { cluster, format, ...summary, seconds, cpuSeconds: childCpuSeconds() - cpu0, bytes, peakMb: peak?.peakMb ?? 0 };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      small: { type: 'string', default: '10000' },
      large: { type: 'string', default: '100000' },
      'max-rss-ratio': { type: 'string', default: '1.5' },
      out: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const small = Number(values.small);
  const large = Number(values.large);
  const maxRatio = Number(values['max-rss-ratio']);
  if (![small, large].every((n) => Number.isInteger(n) && n > 0) || !(maxRatio >= 0)) {
    process.stderr.write(`bench:export: --small and --large must be positive integers, --max-rss-ratio a number ≥ 0\n${HELP}\n`);
    return 2;
  }
  const dir = resolve(values.out ?? join(ROOT, 'bench/out/export'));
  mkdirSync(dir, { recursive: true });
  await ensureBuilt(ROOT, say);
  const db = join(dir, 'export.db');
  await buildStore(db, small, large);
  const runs: Run[] = [];
  for (const format of ['stix', 'misp']) {
    for (const [cluster, n] of [
      ['small-cluster', small],
      ['large-cluster', large],
    ] as const) {
      say(`export --behash ${cluster} --format ${format}...`);
      const r = await exportOnce(db, cluster, format, join(dir, `${cluster}.${format}.json`));
      if (r.behaviours !== n) throw new Error(`export ${cluster} ${format}: ${r.behaviours} behaviours, ${n} expected`);
      runs.push(r);
    }
  }
  const ratios = ['stix', 'misp'].map((format) => {
    const [s, l] = ['small-cluster', 'large-cluster'].map((c) => runs.find((r) => r.cluster === c && r.format === format) as Run);
    return { format, ratio: (l as Run).peakMb / (s as Run).peakMb };
  });
  const missed = maxRatio > 0 ? ratios.filter((r) => r.ratio > maxRatio) : [];
  if (values.json) process.stdout.write(`${JSON.stringify({ small, large, runs, ratios, maxRatio, met: missed.length === 0 })}\n`);
  else {
    const lines = runs.map(
      (r) =>
        `${r.format.padEnd(5)} ${r.cluster.padEnd(14)} ${r.behaviours.toLocaleString('en-US').padStart(8)} behaviours  ${r.objects.toLocaleString('en-US').padStart(10)} objects  ` +
        `${r.seconds.toFixed(1).padStart(6)} s  ${Math.round(r.behaviours / r.seconds)
          .toLocaleString('en-US')
          .padStart(6)} behaviours/s  ` +
        `${(r.bytes / 1e6 / r.seconds).toFixed(1).padStart(5)} MB/s (${(r.bytes / 1e6).toFixed(0)} MB)  ${r.cpuSeconds.toFixed(1)} CPU-s  peak RSS ${r.peakMb.toFixed(1)} MB`,
    );
    const judged = ratios.map(
      (r) =>
        `peak RSS large/small, ${r.format}: ${r.ratio.toFixed(2)} (${maxRatio > 0 ? `target ≤ ${maxRatio}: ${r.ratio > maxRatio ? 'MISSED' : 'met'}` : 'not judged'})`,
    );
    process.stdout.write(`${[...lines, ...judged].join('\n')}\n`);
  }
  return missed.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:export: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
