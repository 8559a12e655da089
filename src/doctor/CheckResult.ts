import type { HealthCheck, HealthCheckOf, HealthStatus } from '../store/index.js';

// the store backends diagnose themselves (their clients live there) in the same vocabulary
export { healthCheckOf as checkOf } from '../store/index.js';
/** Outcome of one check: `warn` is worth fixing but nothing breaks; `fail` stops something from working. */
export type CheckStatus = HealthStatus;
/** One diagnosed aspect of the installation; `fix` is present whenever the status is not `pass`. */
export type CheckResult = HealthCheck;
/** Builders for the results of one check id. */
export type CheckOf = HealthCheckOf;

/** What `sandtrail doctor` reports: `ok` is false as soon as one check fails (warnings are fine). */
export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
}

const RANK: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

/** The worse of two results (the first on a tie). */
export function worst(a: CheckResult, b: CheckResult): CheckResult {
  return RANK[b.status] > RANK[a.status] ? b : a;
}
