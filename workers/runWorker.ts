import { loadConfig, unknownEnvWarnings, type Config } from '../src/config/index.js';
import { errorCode, messageOf } from '../src/errors/index.js';
import { exitWhenDone } from '../src/lifecycle/index.js';
import { createLogger, type Logger } from '../src/log/index.js';
import { runWorkerProcess } from '../src/runner/index.js';

/** The worker processes there are: the two pipeline stages, lookups, artefact downloads. */
export type WorkerEntry = 'feed' | 'index' | 'lookup' | 'artefacts';

/**
 * The configuration of a worker entry point, from the environment (and SANDTRAIL_CONFIG), with its
 * logger; as the CLI's `worker` commands do: a bad setting is one JSON log line and exit 2, a
 * SANDTRAIL_* variable no setting reads is said at warn. Undefined when the configuration is invalid.
 */
export function workerConfig(worker: string): { config: Config; log: Logger } | undefined {
  let config: Config;
  try {
    config = loadConfig({ env: process.env, file: process.env.SANDTRAIL_CONFIG });
  } catch (err) {
    // no configured logger yet: the default one, so the process's log stays JSON lines
    createLogger('info', { worker }).fatal({ code: errorCode(err) }, messageOf(err));
    process.exitCode = 2;
    return undefined;
  }
  const log = createLogger(config.logLevel, { worker }, { format: config.logFormat });
  for (const u of unknownEnvWarnings(process.env)) log.warn({ variable: u.variable }, u.message);
  return { config, log };
}

/** Shared start-up of the worker entry points: config from env (and SANDTRAIL_CONFIG), then run. */
export async function runWorker(entry: WorkerEntry): Promise<void> {
  const loaded = workerConfig(entry);
  if (!loaded) return;
  const { config, log } = loaded;
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
