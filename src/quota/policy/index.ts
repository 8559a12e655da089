/**
 * The quota policy: the spec's §Limits rules as a pure function from an operation (and the little
 * state rules 6 and 10 need) to units per quota kind, plus the period buckets those units land in.
 * No I/O: the ledger applies the charges and persists the state changes.
 */
export { QUOTA_KINDS, isQuotaKind, type QuotaKind } from './QuotaKind.js';
export type {
  Operation,
  OperationBase,
  OperationName,
  TimedOperation,
  ApiOperation,
  IocOperation,
  FileUploadOperation,
  AsmApiOperation,
  AsmEntityOperation,
  UiSearchOperation,
  UiDownloadOperation,
  LivehuntOperation,
  RetrohuntOperation,
  DiffSessionOperation,
  PrivateScanOperation,
  GraphCreateOperation,
} from './Operation.js';
export type { Charge } from './Charge.js';
export { emptyPolicyState, applyStateChanges, type PolicyState, type Rule6Grants, type StateChange } from './PolicyState.js';
export { parseOperation, type ParseOperationResult } from './parseOperation.js';
export { parseInstant } from './parseInstant.js';
export { chargeOf, type ChargeResult } from './chargeOf.js';
export { accountsOf, type Account } from './accountsOf.js';
export { periodBuckets, type Period, type PeriodBucket } from './periodBuckets.js';
export { normalizeApiPath } from './normalizeApiPath.js';
export { OperationReplay, replayOperations, type Consumption, type ReplayResult } from './replayOperations.js';
