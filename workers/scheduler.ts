/** Entry point of the live scheduler: `node dist/workers/scheduler.js` (source from SANDTRAIL_SOURCE, default api). */
import { loadConfig } from '../src/config/index.js';
import { createLogger } from '../src/log/index.js';
import { parseCursor, runSchedulerProcess } from '../src/queue/index.js';

try {
  const config = loadConfig({ env: process.env, file: process.env.SANDTRAIL_CONFIG });
  const start = process.env.SANDTRAIL_START ? parseCursor(process.env.SANDTRAIL_START) : undefined;
  await runSchedulerProcess(config, createLogger(config.logLevel, { worker: 'scheduler' }), {
    sourceSpec: process.env.SANDTRAIL_SOURCE ?? 'api',
    start,
  });
} catch (err) {
  process.stderr.write(`sandtrail scheduler: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
