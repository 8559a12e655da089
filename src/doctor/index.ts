/**
 * `sandtrail doctor`: checks an installation (Node, Redis and its settings, clock skew, the store,
 * the GTI key, the bzip2 decoder, disk space) and says how to fix what is wrong. Reads only: it
 * never starts a Redis, creates a database or runs the Elasticsearch setup.
 */
export { runDoctor } from './runDoctor.js';
export type { DoctorOptions } from './runDoctor.js';
export { formatReport } from './formatReport.js';
export { judgeRedis } from './judgeRedis.js';
export type { RedisFacts } from './judgeRedis.js';
export { judgeFreeSpace, DISK_FAIL_BYTES, DISK_WARN_BYTES } from './checkDisk.js';
export type { CheckResult, CheckStatus, DoctorReport } from './CheckResult.js';
