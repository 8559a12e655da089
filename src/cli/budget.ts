import { SandtrailError } from '../errors/index.js';
import { chargeOf, emptyPolicyState, BudgetGuard, estimate, formatEstimate, type EstimateLine } from '../quota/index.js';
import { writeOut, type CliContext } from './context.js';

/** Flags of every command that calls the GTI API. */
export interface BudgetFlags {
  dryRun?: boolean;
  maxApiUnits?: string;
  force?: boolean;
}

/** API units one request costs by the policy (for a user with no rule-6 grants). */
export function apiUnitsOf(method: string, path: string): number {
  const { charge } = chargeOf({ op: 'api', method, path, user: 'estimate', at: new Date() }, emptyPolicyState());
  return charge.units.api_requests ?? 0;
}

/** An estimate line for `count` requests like `method path`, priced and cited by the policy. */
export function estimateLine(what: string, count: number, method: string, path: string): EstimateLine {
  const { charge } = chargeOf({ op: 'api', method, path, user: 'estimate', at: new Date() }, emptyPolicyState());
  return { what, count, apiUnitsEach: charge.units.api_requests ?? 0, rules: charge.rules };
}

/**
 * The budget guard of a command: `--dry-run` prints the estimate by rule and stops (returns
 * undefined); otherwise the estimate is checked against `--max-api-units` and the returned guard
 * stops the run before a call would exceed it.
 */
export async function guardBudget(flags: BudgetFlags, lines: EstimateLine[], ctx: CliContext): Promise<BudgetGuard | undefined> {
  const e = estimate(lines);
  if (flags.dryRun) {
    await writeOut(`${formatEstimate(e)}\n(dry run: nothing was called)\n`);
    return undefined;
  }
  const maxApiUnits = flags.maxApiUnits === undefined ? undefined : Number(flags.maxApiUnits);
  if (maxApiUnits !== undefined && (!Number.isInteger(maxApiUnits) || maxApiUnits < 0)) {
    throw new SandtrailError('USAGE', '--max-api-units must be a whole number');
  }
  const guard = new BudgetGuard({ maxApiUnits, force: flags.force, remainingDaily: null });
  guard.preflight(e);
  if (maxApiUnits !== undefined && e.apiUnits > maxApiUnits)
    ctx.log.warn({ estimate: e.apiUnits, maxApiUnits }, 'the run will stop at --max-api-units');
  return guard;
}
