export {
  SandtrailError,
  STORE_FAULT_CODES,
  errorCode,
  isRetryable,
  isStoreFault,
  markLogged,
  messageOf,
  storeFaultOfReason,
  wasLogged,
} from './SandtrailError.js';
export type { ErrorCode } from './SandtrailError.js';
export { redactUrlCredentials } from './redactUrlCredentials.js';
