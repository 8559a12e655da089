import { loadConfig } from '../src/config/index.js';
import { errorCode, messageOf } from '../src/errors/index.js';
import { createLogger } from '../src/log/index.js';
import { runWorkerProcess, type WorkerKind } from '../src/queue/index.js';

/** Shared start-up of the worker entry points: config from env (and SANDTRAIL_CONFIG), then run. */
export async function runWorker(kind: WorkerKind): Promise<void> {
  let config;
  try {
    config = loadConfig({ env: process.env, file: process.env.SANDTRAIL_CONFIG });
  } catch (err) {
    process.stderr.write(`sandtrail worker ${kind}: ${messageOf(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const log = createLogger(config.logLevel, { worker: kind });
  try {
    // a forced stop (second signal) exits non-zero, a drained one zero
    process.exitCode = (await runWorkerProcess(kind, config, log)) ? 130 : 0;
  } catch (err) {
    log.fatal({ code: errorCode(err) }, messageOf(err));
    process.exitCode = 1;
  }
}
