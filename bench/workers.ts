/** The worker processes of the end-to-end phase, started exactly as an operator would start them. */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

/** A spawned worker process. */
export interface WorkerChild {
  kind: 'feed' | 'index';
  /** Role in the report: `feed-worker`, or `feed-worker-2` when a stage has several processes. */
  name: string;
  pid: number;
  logPath: string;
  /** Set once the process has exited (code or signal), whoever stopped it. */
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  exited: Promise<void>;
  /** SIGTERM (the worker drains), then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  /** Last lines of its log, for error messages. */
  tail(lines?: number): string;
}

/**
 * Spawns `node dist/workers/<kind>-worker.js` (compiled, as operators run them; the bench builds
 * dist/ first when it is stale) from the repository root with `env` (the SANDTRAIL_* settings),
 * stdout and stderr appended to `logPath`: workers log to stderr, and a pipe nobody reads would
 * eventually block them.
 */
export function spawnWorker(
  kind: 'feed' | 'index',
  root: string,
  env: NodeJS.ProcessEnv,
  logPath: string,
  name = `${kind}-worker`,
): WorkerChild {
  const fd = openSync(logPath, 'w');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [`dist/workers/${kind}-worker.js`], { cwd: root, env, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd); // the child holds its own copy
  }
  if (child.pid === undefined) throw new Error(`could not spawn the ${name}`);
  // A benchmark that ends abruptly (process.exit after its time limit) must not leave workers behind.
  const killOnExit = (): void => {
    if (!w.exit) child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const w: WorkerChild = {
    kind,
    name,
    pid: child.pid,
    logPath,
    exit: undefined,
    exited: once(child, 'exit').then(([code, signal]) => {
      w.exit = { code: code as number | null, signal: signal as NodeJS.Signals | null };
      process.off('exit', killOnExit);
    }),
    async stop(graceMs = 30_000) {
      if (w.exit) return;
      child.kill('SIGTERM');
      // unref'd: a pending grace timer must not keep the benchmark alive once the worker is gone
      const done = await Promise.race([w.exited.then(() => true), sleep(graceMs, false, { ref: false })]);
      if (!done) {
        child.kill('SIGKILL');
        await w.exited;
      }
    },
    tail(lines = 20) {
      try {
        const text = readFileSync(logPath, 'utf8').trimEnd();
        return text ? text.split('\n').slice(-lines).join('\n') : `(${logPath} is empty)`;
      } catch {
        return '(no log)';
      }
    },
  };
  return w;
}

/** Environment for the workers: ours without any SANDTRAIL_* or REDIS_URL the caller had set, plus `settings`. */
export function workerEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // A stray SANDTRAIL_CONFIG or SANDTRAIL_INDEX_CHUNK_MAX_DOCS from the shell would silently change what is measured.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SANDTRAIL_') && k !== 'REDIS_URL') env[k] = v;
  return { ...env, ...settings };
}
