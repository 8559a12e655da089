export {
  SandtrailError,
  STORE_FAULT_CODES,
  errorCode,
  isRetryable,
  isStoreFault,
  messageOf,
  storeFaultOfReason,
} from './SandtrailError.js';
export type { ErrorCode } from './SandtrailError.js';
