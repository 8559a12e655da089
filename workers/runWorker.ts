import { loadConfig } from '../src/config/index.js';
import { errorCode, messageOf } from '../src/errors/index.js';
import { exitWhenDone } from '../src/lifecycle/index.js';
import { createLogger, type Logger } from '../src/log/index.js';
import { runWorkerProcess } from '../src/runner/index.js';

/** The worker processes there are: the two pipeline stages, lookups, artefact downloads. */
export type WorkerEntry = 'feed' | 'index' | 'lookup' | 'artefacts';

/** Shared start-up of the worker entry points: config from env (and SANDTRAIL_CONFIG), then run. */
export async function runWorker(entry: WorkerEntry): Promise<void> {
  let config;
  try {
    config = loadConfig({ env: process.env, file: process.env.SANDTRAIL_CONFIG });
  } catch (err) {
    process.stderr.write(`sandtrail worker ${entry}: ${messageOf(err)}\n`);
    // an invalid setting is a configuration error, as for every sandtrail command
    process.exitCode = 2;
    return;
  }
  const log = createLogger(config.logLevel, { worker: entry }, { format: config.logFormat });
  try {
    // a forced stop (second signal) exits non-zero, a drained one zero; what runs is PROCESS_KINDS' row
    process.exitCode = (await runWorkerProcess(`worker ${entry}`, config, log)) ? 130 : 0;
  } catch (err) {
    const code = errorCode(err);
    log.fatal({ code }, messageOf(err));
    // a missing required setting (REDIS_URL) is a usage error: 2, like the CLI's
    process.exitCode = code === 'USAGE' || code === 'CONFIG_INVALID' ? 2 : 1;
  }
  exitSoon(log);
}

/**
 * Once stopped, the process exits within EXIT_GRACE_MS even if a connection did not close, saying
 * what was still open: a leak shows in the log of the worker that had it.
 */
export function exitSoon(log: Logger): void {
  exitWhenDone({
    graceMs: EXIT_GRACE_MS,
    onLinger: (open) => {
      if (open.length) log.warn({ open }, 'still open after the stop: exiting without waiting for them');
    },
  });
}

/** Time left for the last log lines and closes once a worker has stopped. */
const EXIT_GRACE_MS = 2000;
