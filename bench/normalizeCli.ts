/**
 * The "normalize (CLI)" phase: `node dist/src/cli/run.js normalize FILE...` as users run it, its
 * documents to /dev/null, timed from spawn to exit (Node's start-up and the decoders included).
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { FeedManifest } from '../src/synth/index.js';
import { BenchFailure, throwIfAborted } from './failure.js';
import type { PhaseResult } from './inproc.js';
import { childCpuSeconds, TreeSampler } from './procs.js';
import { workerEnv } from './workers.js';

/** Exit 3: some lines were rejected, as the feed's planted malformed lines are. */
const SOME_REJECTED = 3;

/** Runs the normalize command over every file of the feed once; its rejections go to `<outDir>/normalize-cli.log`. */
export async function measureNormalizeCli(o: {
  root: string;
  outDir: string;
  feedDir: string;
  manifest: FeedManifest;
  signal?: AbortSignal;
}): Promise<PhaseResult & { command: string }> {
  const files = o.manifest.files.map((f) => resolve(o.feedDir, f.file));
  const args = ['dist/src/cli/run.js', 'normalize', ...files];
  const command = `node dist/src/cli/run.js normalize <${files.length} files> > /dev/null`;
  const out = openSync('/dev/null', 'w');
  const logPath = join(o.outDir, 'normalize-cli.log');
  const err = openSync(logPath, 'w');
  const sampler = new TreeSampler(50);
  const cpu0 = childCpuSeconds();
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: o.root, env: workerEnv({}), stdio: ['ignore', out, err] });
  closeSync(out);
  closeSync(err);
  if (child.pid === undefined) throw new BenchFailure('phase normalize (CLI): could not spawn the CLI');
  sampler.name(child.pid, 'normalize-cli');
  sampler.start();
  const kill = (): void => void child.kill('SIGKILL');
  o.signal?.addEventListener('abort', kill, { once: true });
  const code = await new Promise<number | null>((res, rej) => {
    child.once('error', rej);
    child.once('close', (c) => res(c));
  }).finally(() => o.signal?.removeEventListener('abort', kill));
  const seconds = (performance.now() - t0) / 1000;
  const peaks = sampler.stop().filter((p) => p.role === 'normalize-cli' || p.role.endsWith('(normalize-cli)'));
  throwIfAborted(o.signal, 'normalize (CLI)');
  if (code !== 0 && code !== SOME_REJECTED) throw new BenchFailure(`phase normalize (CLI): \`${command}\` exited ${code}`);
  // one JSON line on stderr per rejected line: the planted malformed lines, no more, no fewer
  const rejected = readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('"code":')).length;
  const lines = o.manifest.files.reduce((a, f) => a + f.lines, 0);
  if (rejected !== lines - o.manifest.records) {
    throw new BenchFailure(`phase normalize (CLI) rejected ${rejected} lines, the manifest plants ${lines - o.manifest.records}`);
  }
  return {
    phase: 'normalizeCli',
    lines,
    ok: lines - rejected,
    bytes: o.manifest.bytesUncompressed,
    seconds,
    peaks,
    cpuSeconds: childCpuSeconds() - cpu0,
    command,
  };
}
