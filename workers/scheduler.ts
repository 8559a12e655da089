/** Entry point of the live scheduler: `node dist/workers/scheduler.js` (source from SANDTRAIL_SOURCE, default api). */
import { exitSoon, workerConfig } from './runWorker.js';
import { errorCode, messageOf } from '../src/errors/index.js';
import { parseCursor } from '../src/queue/index.js';
import { runSchedulerProcess } from '../src/runner/index.js';

const loaded = workerConfig('scheduler');
if (loaded) {
  const { config, log } = loaded;
  try {
    const start = process.env.SANDTRAIL_START ? parseCursor(process.env.SANDTRAIL_START) : undefined;
    const forced = await runSchedulerProcess(config, log, { sourceSpec: process.env.SANDTRAIL_SOURCE ?? 'api', start });
    process.exitCode = forced ? 130 : 0;
  } catch (err) {
    const code = errorCode(err);
    log.fatal({ code }, messageOf(err));
    // a missing required setting (REDIS_URL) is a usage error: 2, like the CLI's
    process.exitCode = code === 'USAGE' || code === 'CONFIG_INVALID' ? 2 : 1;
  }
  exitSoon(log);
}
