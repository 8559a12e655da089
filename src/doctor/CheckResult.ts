/** Outcome of one check: `warn` is worth fixing but nothing breaks; `fail` stops something from working. */
export type CheckStatus = 'pass' | 'warn' | 'fail';

/** One diagnosed aspect of the installation; `fix` is present whenever the status is not `pass`. */
export interface CheckResult {
  id: string;
  title: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

/** What `sandtrail doctor` reports: `ok` is false as soon as one check fails (warnings are fine). */
export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
}

/** Builders for the results of one check id, so every result carries its id and title. */
export interface CheckOf {
  pass(detail: string): CheckResult;
  warn(detail: string, fix: string): CheckResult;
  fail(detail: string, fix: string): CheckResult;
}

/** The result builders of one check. */
export function checkOf(id: string, title: string): CheckOf {
  return {
    pass: (detail) => ({ id, title, status: 'pass', detail }),
    warn: (detail, fix) => ({ id, title, status: 'warn', detail, fix }),
    fail: (detail, fix) => ({ id, title, status: 'fail', detail, fix }),
  };
}

const RANK: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

/** The worse of two results (the first on a tie). */
export function worst(a: CheckResult, b: CheckResult): CheckResult {
  return RANK[b.status] > RANK[a.status] ? b : a;
}
