import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/log/index.js';
import { runWorkerProcess, type WorkerKind } from '../src/queue/index.js';

/** Shared start-up of the worker entry points: config from env (and SANDTRAIL_CONFIG), then run. */
export async function runWorker(kind: WorkerKind): Promise<void> {
  try {
    const config = loadConfig({ env: process.env, file: process.env.SANDTRAIL_CONFIG });
    await runWorkerProcess(kind, config, createLogger(config.logLevel, { worker: kind }));
  } catch (err) {
    process.stderr.write(`sandtrail worker ${kind}: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
