/** The compiled CLI the backfill phase runs: dist/ must exist and be newer than its sources. */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BenchFailure } from './failure.js';

/** Source files tsconfig.build.json compiles, with the dist/ file each becomes. */
function* sources(root: string, dir: string): Generator<{ ts: string; js: string }> {
  for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
    const rel = join(dir, e.name);
    if (e.isDirectory()) yield* sources(root, rel);
    else if (/\.(m|c)?ts$/.test(e.name) && !e.name.endsWith('.d.ts')) {
      yield {
        ts: join(root, rel),
        js: join(
          root,
          'dist',
          rel.replace(/\.(m|c)?ts$/, (x) => x.replace('ts', 'js')),
        ),
      };
    }
  }
}

const mtime = (path: string): number | undefined => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
};

/** Why dist/ cannot be used as it is (missing, or a source is newer than its output), or undefined. */
export function distStaleReason(root: string): string | undefined {
  if (mtime(join(root, 'dist', 'src', 'cli', 'run.js')) === undefined) return 'dist/src/cli/run.js is missing';
  const configs = ['tsconfig.json', 'tsconfig.build.json'].map((f) => mtime(join(root, f)) ?? 0);
  for (const dir of ['src', 'workers']) {
    for (const { ts, js } of sources(root, dir)) {
      const out = mtime(js);
      if (out === undefined) return `${relative(root, js)} is missing`;
      if ((mtime(ts) ?? 0) > out) return `${relative(root, ts)} is newer than ${relative(root, js)}`;
      if (Math.max(...configs) > out) return `a tsconfig is newer than ${relative(root, js)}`;
    }
  }
  return undefined;
}

/**
 * Runs `npm run build` when dist/ is missing or older than src/ (its output goes to stderr, so
 * `--json` stays one object on stdout). Returns why it built, or undefined when dist/ was fresh.
 */
export async function ensureBuilt(root: string, say: (msg: string) => void, signal?: AbortSignal): Promise<string | undefined> {
  const why = distStaleReason(root);
  if (!why) return undefined;
  say(`building the CLI (npm run build): ${why}...`);
  const t0 = performance.now();
  const child = spawn('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
  const kill = (): void => void child.kill('SIGTERM');
  signal?.addEventListener('abort', kill, { once: true });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c));
  }).finally(() => signal?.removeEventListener('abort', kill));
  if (code !== 0) throw new BenchFailure(`npm run build exited ${code}: the backfill phase needs the compiled CLI (${why})`);
  say(`  built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return why;
}
