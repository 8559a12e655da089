/**
 * The "official client" phase: how the official GTI Python client reads batches (bz2.decompress
 * of the whole file, then json.loads of each line), run as bench/official_read_loop.py with python3.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { FeedManifest } from '../src/synth/index.js';
import type { RolePeak } from './procs.js';
import { runReferenceScript } from './referenceScript.js';

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
  const run = await runReferenceScript<{ records: number; ok: number; bytes: number; seconds: number; maxRssKb: number }>(
    'official client',
    ROLE,
    'python3',
    [script, ...files],
    signal,
  );
  const r = run.figures;
  return {
    skipped: false,
    python,
    lines: r.records,
    ok: r.ok,
    bytes: r.bytes,
    seconds: r.seconds,
    wallSeconds: run.wallSeconds,
    cpuSeconds: run.cpuSeconds,
    peaks: run.peaks,
  };
}
