/**
 * The "store floor" phase: bench/storeFloor.mjs (decode with the pipeline's decoder, split,
 * JSON.parse, each line's own bytes inserted by id into SQLite from a worker thread), the least a
 * pipeline storing these files does on two threads. The backfill's ratio to it is what the
 * pipeline's own work (normalizing, pivot rows, batch log, queue) costs.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FeedManifest } from '../src/synth/index.js';
import type { RolePeak } from './procs.js';
import { runReferenceScript } from './referenceScript.js';

/** Figures of the store floor. */
export interface FloorResult {
  lines: number;
  /** Lines that parsed. */
  ok: number;
  /** Distinct ids in its table at the end. */
  stored: number;
  bytes: number;
  /** First decoder spawned to last commit (Node's start-up excluded). */
  seconds: number;
  /** Spawn to exit, start-up included. */
  wallSeconds: number;
  cpuSeconds: number;
  peaks: RolePeak[];
}

const ROLE = 'node (store floor)';

export interface FloorOptions {
  root: string;
  outDir: string;
  feedDir: string;
  manifest: FeedManifest;
  /** The decoder the pipeline spawns and its arguments (resolveBzip2Decoder). */
  decoder: { path: string; args: string[] };
  signal?: AbortSignal;
}

/** Runs the store floor over every batch file of the feed, in manifest order, in one node process. */
export async function measureFloor(o: FloorOptions): Promise<FloorResult> {
  const db = join(o.outDir, 'floor.db');
  const files = o.manifest.files.map((f) => join(o.feedDir, f.file));
  const script = join(o.root, 'bench', 'storeFloor.mjs');
  const run = await runReferenceScript<{ lines: number; parsed: number; stored: number; bytes: number; seconds: number; maxRssKb: number }>(
    'store floor',
    ROLE,
    process.execPath,
    [script, db, o.decoder.path, ...o.decoder.args, '--', ...files],
    o.signal,
  ).finally(() => {
    for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
  });
  const r = run.figures;
  return {
    lines: r.lines,
    ok: r.parsed,
    stored: r.stored,
    bytes: r.bytes,
    seconds: r.seconds,
    wallSeconds: run.wallSeconds,
    cpuSeconds: run.cpuSeconds,
    peaks: run.peaks,
  };
}
