export { createLogger, ECS_NAMESPACE, LOG_FORMATS } from './createLogger.js';
export type { CreateLoggerOptions, LogDestination, LogFormat, Logger } from './createLogger.js';
export { redactUrlCredentials } from './redact.js';
