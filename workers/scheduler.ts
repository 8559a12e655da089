/** Entry point of the live scheduler: `node dist/workers/scheduler.js` (source from SANDTRAIL_SOURCE, default api). */
import { exitSoon } from './runWorker.js';
import { loadConfig, type Config } from '../src/config/index.js';
import { errorCode, messageOf } from '../src/errors/index.js';
import { createLogger } from '../src/log/index.js';
import { parseCursor } from '../src/queue/index.js';
import { runSchedulerProcess } from '../src/runner/index.js';

let config: Config | undefined;
try {
  config = loadConfig({ env: process.env, file: process.env.SANDTRAIL_CONFIG });
} catch (err) {
  process.stderr.write(`sandtrail scheduler: ${messageOf(err)}\n`);
  // an invalid setting is a configuration error, as for every sandtrail command
  process.exitCode = 2;
}
if (config) {
  const log = createLogger(config.logLevel, { worker: 'scheduler' }, { format: config.logFormat });
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
