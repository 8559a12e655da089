export * from './policy/index.js';
export { QuotaLedger } from './ledger/QuotaLedger.js';
export type { Scope, UsageRow, AuditEntry } from './ledger/QuotaLedger.js';
export { operationLabel } from './ledger/operationLabel.js';
export { BudgetGuard, estimate, formatEstimate, apiUnitsOf } from './BudgetGuard.js';
export type { BudgetOptions, Estimate, EstimateLine } from './BudgetGuard.js';
export { ledgerClient } from './ledgerClient.js';
export { abandonCalls, callsOpen, callsSettled } from './callsInFlight.js';
export type { LedgerClientOptions } from './ledgerClient.js';
