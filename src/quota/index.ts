export * from './policy/index.js';
export { QuotaLedger } from './ledger/QuotaLedger.js';
export type { Scope, UsageRow, AuditEntry } from './ledger/QuotaLedger.js';
export { operationLabel } from './ledger/operationLabel.js';
export { BudgetGuard, estimate, formatEstimate } from './BudgetGuard.js';
export type { BudgetOptions, Estimate, EstimateLine } from './BudgetGuard.js';
