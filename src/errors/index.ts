export { SandtrailError, errorCode, isRetryable, messageOf } from './SandtrailError.js';
export type { ErrorCode } from './SandtrailError.js';
