/**
 * A reference program of the bench (the official client's loop, the store floor): spawned over
 * the feed's files, its peak memory sampled, its CPU taken from the reaped tree, and the one JSON
 * object it prints read back.
 */
import { spawn } from 'node:child_process';
import { BenchFailure, throwIfAborted } from './failure.js';
import { childCpuSeconds, TreeSampler, type RolePeak } from './procs.js';

/** What every reference program prints: its own figures, peak RSS included. */
interface ScriptFigures {
  maxRssKb: number;
}

export interface ScriptRun<T> {
  /** The program's own figures. */
  figures: T;
  /** Spawn to exit, start-up included. */
  wallSeconds: number;
  /** The program and everything it spawned. */
  cpuSeconds: number;
  /** Its peak RSS first (exact: its own maxRssKb), then its children's. */
  peaks: RolePeak[];
}

/**
 * Runs `command args` as phase `phase`, its process named `role` in the peaks; fails the bench
 * when it exits non-zero or prints no JSON object, and when `signal` aborted it.
 */
export async function runReferenceScript<T extends ScriptFigures>(
  phase: string,
  role: string,
  command: string,
  args: readonly string[],
  signal?: AbortSignal,
): Promise<ScriptRun<T>> {
  const sampler = new TreeSampler();
  const cpu0 = childCpuSeconds();
  const t0 = performance.now();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid !== undefined) sampler.name(child.pid, role);
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
  // Only the program's process (and anything it spawned), not the bench's own tsx helper.
  const peaks = sampler.stop().filter((p) => p.role === role || p.role.endsWith(`(${role})`));
  throwIfAborted(signal, phase);
  const program = `${command} ${args[0] ?? ''}`;
  if (code !== 0) throw new BenchFailure(`phase ${phase}: ${program} exited ${code}: ${err.trim().slice(-2000)}`);
  let figures: T;
  try {
    figures = JSON.parse(out) as T;
  } catch {
    throw new BenchFailure(`phase ${phase}: ${program} printed no JSON result: ${JSON.stringify(out.slice(0, 200))}`);
  }
  // its own peak is exact; the sampler's figure is a lower bound for a process it cannot read at exit
  const own = peaks.find((p) => p.role === role);
  if (own) own.peakMb = Math.max(own.peakMb, figures.maxRssKb / 1024);
  else peaks.push({ role, peakMb: figures.maxRssKb / 1024, processes: 1 });
  peaks.sort((a, b) => b.peakMb - a.peakMb);
  return { figures, wallSeconds, cpuSeconds: childCpuSeconds() - cpu0, peaks };
}
