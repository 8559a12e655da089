import { SandtrailError } from '../errors/index.js';
import { chargeOf, emptyPolicyState } from './policy/index.js';

/** One line of an estimate: what will be called, how often, and what it costs by which rule. */
export interface EstimateLine {
  what: string;
  count: number;
  apiUnitsEach: number;
  rules: number[];
  /** More calls than `count` may follow, known only from the answers (further pages, a report's artefacts). */
  open?: boolean;
}

export interface Estimate {
  lines: EstimateLine[];
  apiUnits: number;
  /** Some line is open: the run may spend more than `apiUnits` (its --max-api-units still bounds it). */
  atLeast: boolean;
}

export interface BudgetOptions {
  /** Stop before the run's API units would exceed this. */
  maxApiUnits?: number;
  /** Start even when the estimate exceeds the remaining daily allowance. */
  force?: boolean;
  /** Remaining API units today (allowed − used), when known from `overall_quotas`. */
  remainingDaily?: number | null;
}

/** Builds an estimate from its lines. */
export function estimate(lines: EstimateLine[]): Estimate {
  return { lines, apiUnits: lines.reduce((n, l) => n + l.count * l.apiUnitsEach, 0), atLeast: lines.some((l) => l.open === true) };
}

/** Human-readable estimate, one line per rule-priced operation (what `--dry-run` prints). */
export function formatEstimate(e: Estimate): string {
  const rows = e.lines.map(
    (l) =>
      `  ${l.what}: ${l.count}${l.open ? '+' : ''} × ${l.apiUnitsEach} API unit(s) = ${l.count * l.apiUnitsEach}${l.open ? '+' : ''}  (rule ${l.rules.join(', ') || '1'})`,
  );
  const total = e.atLeast
    ? `estimated API units: at least ${e.apiUnits} (lines marked + depend on the answers; --max-api-units bounds the run)`
    : `estimated API units: ${e.apiUnits}`;
  return [total, ...rows].join('\n');
}

/**
 * The guard every command that spends API units goes through: a preflight against the daily
 * allowance (refuse without --force), and a running total that stops before --max-api-units.
 */
export class BudgetGuard {
  private spent = 0;

  constructor(private readonly o: BudgetOptions = {}) {}

  /** Throws BUDGET_EXCEEDED when the run should not start. */
  preflight(e: Estimate): void {
    const remaining = this.o.remainingDaily;
    if (remaining !== undefined && remaining !== null && e.apiUnits > remaining && !this.o.force) {
      throw new SandtrailError(
        'BUDGET_EXCEEDED',
        `the estimate (${e.apiUnits} API units) exceeds the ${remaining} units left today; use --force to start anyway`,
      );
    }
  }

  /** Reserves units before a call; throws BUDGET_EXCEEDED instead of going over --max-api-units. */
  spend(apiUnits: number): void {
    const max = this.o.maxApiUnits;
    if (max !== undefined && this.spent + apiUnits > max) {
      throw new SandtrailError(
        'BUDGET_EXCEEDED',
        `stopping: ${this.spent} API units spent, the next call would exceed --max-api-units ${max}`,
      );
    }
    this.spent += apiUnits;
  }

  get spentApiUnits(): number {
    return this.spent;
  }
}

/** API units one request costs by the quota policy (for a user with no rule-6 grants): 1 by rule 1, 0 by rules 2 and 3. */
export function apiUnitsOf(method: string, path: string): number {
  const { charge } = chargeOf({ op: 'api', method, path, user: 'estimate', at: new Date() }, emptyPolicyState());
  return charge.units.api_requests ?? 0;
}
