/**
 * The "official client" phase: how the official GTI Python client reads batches (bz2.decompress
 * of the whole file, then json.loads of each line), run as bench/official_read_loop.py with python3.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { FeedManifest } from '../src/synth/index.js';
import { BenchFailure, throwIfAborted } from './failure.js';
import { childCpuSeconds, TreeSampler, type RolePeak } from './procs.js';

/** Figures of the official-client read loop, or why it was skipped. */
export type OfficialResult =
  | { skipped: true; reason: string }
  | {
      skipped: false;
      python: string;
      lines: number;
      ok: number;
      bytes: number;
      /** The read loop's own time, as the script measured it (interpreter start-up excluded). */
      seconds: number;
      /** Spawn to exit, start-up included. */
      wallSeconds: number;
      cpuSeconds: number;
      peaks: RolePeak[];
    };

const ROLE = 'python3 (official loop)';

/** The python3 on PATH and its version, or undefined when there is none. */
function findPython(): string | undefined {
  const r = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return undefined;
  return (r.stdout || r.stderr).trim();
}

/**
 * Runs the read loop over every batch file of the feed, in manifest order, in one python3
 * process. Skipped (not failed) when there is no python3; fails when the script fails or did
 * not read the whole feed.
 */
export async function measureOfficial(
  root: string,
  feedDir: string,
  manifest: FeedManifest,
  signal?: AbortSignal,
): Promise<OfficialResult> {
  const python = findPython();
  if (!python) return { skipped: true, reason: 'no python3 on PATH' };
  const script = join(root, 'bench', 'official_read_loop.py');
  const files = manifest.files.map((f) => join(feedDir, f.file));
  const sampler = new TreeSampler();
  const cpu0 = childCpuSeconds();
  const t0 = performance.now();
  const child = spawn('python3', [script, ...files], { stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid !== undefined) sampler.name(child.pid, ROLE);
  sampler.start();
  const kill = (): void => void child.kill('SIGKILL');
  signal?.addEventListener('abort', kill, { once: true });
  process.once('exit', kill);
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c));
  }).finally(() => {
    signal?.removeEventListener('abort', kill);
    process.off('exit', kill);
  });
  const wallSeconds = (performance.now() - t0) / 1000;
  // Only the script's process (and anything it spawned), not the bench's own tsx helper.
  const peaks = sampler.stop().filter((p) => p.role === ROLE || p.role.endsWith(`(${ROLE})`));
  throwIfAborted(signal, 'official client');
  if (code !== 0) throw new BenchFailure(`phase official client: python3 ${script} exited ${code}: ${err.trim().slice(-2000)}`);
  let r: { records: number; ok: number; bytes: number; seconds: number; maxRssKb: number };
  try {
    r = JSON.parse(out) as typeof r;
  } catch {
    throw new BenchFailure(`phase official client: python3 printed no JSON result: ${JSON.stringify(out.slice(0, 200))}`);
  }
  // The script's own ru_maxrss is exact; the sampler's figure is a lower bound for a process it cannot read at exit.
  const role = peaks.find((p) => p.role === ROLE);
  if (role) role.peakMb = Math.max(role.peakMb, r.maxRssKb / 1024);
  else peaks.push({ role: ROLE, peakMb: r.maxRssKb / 1024, processes: 1 });
  peaks.sort((a, b) => b.peakMb - a.peakMb);
  return {
    skipped: false,
    python,
    lines: r.records,
    ok: r.ok,
    bytes: r.bytes,
    seconds: r.seconds,
    wallSeconds,
    cpuSeconds: childCpuSeconds() - cpu0,
    peaks,
  };
}
