import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The test process's environment without the variables that select a store or cluster: a
 * developer's ELASTICSEARCH_URL (set to run the real-cluster suite) must not redirect the
 * SQLite tests. Tests that want them pass them explicitly.
 */
export function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env))
    if (/^(ELASTICSEARCH_|KIBANA_URL$|SANDTRAIL_SINK$|SANDTRAIL_STORE$|SANDTRAIL_ELASTICSEARCH_|SANDTRAIL_KIBANA_)/.test(k)) delete env[k];
  return env;
}

let built: string | undefined;

/** The built CLI's entry, brought up to date once per test process (see builtCli). */
function cliEntry(): string {
  return (built ??= builtCli());
}

/**
 * Runs the CLI a user runs (`bin/sandtrail.js` over `dist/`, see builtCli) as a child process;
 * `nodeArgs` go to node before the script. The build, not `src/` under tsx: what ships is what is
 * tested, and a start costs a third of the CPU (no TypeScript loader in the process or its index thread).
 */
export function runCli(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: Buffer | string; nodeArgs?: string[] } = {},
): Promise<CliResult> {
  const script = cliEntry();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), script, ...args], {
      env: { ...baseEnv(), SANDTRAIL_LOG_LEVEL: 'warn', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** A CLI process started in the background: the child, and its result once it exits. */
export interface StartedCli {
  child: ChildProcess;
  exited: Promise<CliResult>;
  /** What it has written to stderr so far. */
  stderr(): string;
}

/** Starts the CLI (the build, as runCli) without waiting for it, stdin closed. */
export function startCli(args: string[], env: NodeJS.ProcessEnv): StartedCli {
  const child = spawn(process.execPath, [cliEntry(), ...args], { env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<CliResult>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return { child, exited, stderr: () => stderr };
}

/** A worker entry point as operators run it, `node dist/workers/NAME.js` (the build brought up to date as for the CLI). */
export function builtWorker(name: 'feed-worker' | 'index-worker' | 'lookup-worker' | 'artefact-worker' | 'scheduler'): string {
  cliEntry();
  return join('dist', 'workers', `${name}.js`);
}

/** Newest modification time of the files under `dir` (0 when it is missing). */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) t = Math.max(t, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return t;
}

/**
 * The built CLI a user runs (`bin/sandtrail.js` over `dist/`), built first when `dist/` is missing
 * or older than the sources (the test command builds it, and the run's global setup before any
 * test file starts, so that no two test processes build it at once).
 */
export function builtCli(): string {
  const entry = 'dist/src/cli/run.js';
  const stale = !existsSync(entry) || statSync(entry).mtimeMs < Math.max(newest('src'), newest('workers'));
  if (stale) execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
  return 'bin/sandtrail.js';
}
