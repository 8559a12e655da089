import { errorCode } from '../errors/index.js';
import { checkRedis, createRedis } from '../queue/index.js';
import {
  BudgetGuard,
  chargeOf,
  emptyPolicyState,
  estimate,
  formatEstimate,
  ledgerClient,
  QuotaLedger,
  type Estimate,
  type EstimateLine,
} from '../quota/index.js';
import { writeOut, type CliContext } from './context.js';
import { countFlag } from './countFlag.js';

/** Flags of every command that calls the GTI API. */
export interface BudgetFlags {
  dryRun?: boolean;
  maxApiUnits?: string;
  force?: boolean;
  /** `--dry-run --json` prints the estimate as one JSON object. */
  json?: boolean;
}

/** `--max-api-units`: digits only (not `abc`, `0x10`, `1e3` or empty), whatever the source; undefined when not given. */
export function maxApiUnitsOf(flags: BudgetFlags): number | undefined {
  return flags.maxApiUnits === undefined ? undefined : countFlag('--max-api-units', flags.maxApiUnits, 0, { min: 0, max: 1e12 });
}

/** The estimate `--dry-run --json` prints. */
export function estimateJson(e: Estimate): string {
  const lines = e.lines.map((l) => ({
    what: l.what,
    count: l.count,
    api_units_each: l.apiUnitsEach,
    rules: l.rules,
    open: l.open === true,
  }));
  return `${JSON.stringify({ dry_run: true, estimated_api_units: e.apiUnits, at_least: e.atLeast, lines })}\n`;
}

export { apiUnitsOf } from '../quota/index.js';

/** An estimate line for `count` requests like `method path`, priced and cited by the policy. */
export function estimateLine(what: string, count: number, method: string, path: string, open = false): EstimateLine {
  const { charge } = chargeOf({ op: 'api', method, path, user: 'estimate', at: new Date() }, emptyPolicyState());
  return { what, count, apiUnitsEach: charge.units.api_requests ?? 0, rules: charge.rules, ...(open ? { open } : {}) };
}

/**
 * The budget guard of a command: `--dry-run` prints the estimate by rule and stops (returns
 * undefined); otherwise the estimate is checked against `--max-api-units` and the returned guard
 * stops the run before a call would exceed it.
 */
export async function guardBudget(flags: BudgetFlags, lines: EstimateLine[], ctx: CliContext): Promise<BudgetGuard | undefined> {
  const e = estimate(lines);
  // a bad value is refused even where the estimate alone is asked for
  const maxApiUnits = maxApiUnitsOf(flags);
  if (flags.dryRun) {
    await writeOut(flags.json ? estimateJson(e) : `${formatEstimate(e)}\n(dry run: nothing was called)\n`);
    return undefined;
  }
  const remainingDaily = e.apiUnits > 0 && !flags.force ? await remainingDailyUnits(ctx) : null;
  const guard = new BudgetGuard({ maxApiUnits, force: flags.force, remainingDaily });
  guard.preflight(e);
  if (maxApiUnits !== undefined && e.apiUnits > maxApiUnits)
    ctx.log.warn({ estimate: e.apiUnits, maxApiUnits }, 'the run will stop at --max-api-units');
  return guard;
}

/**
 * API units left today for the key's user (`api_requests_daily` allowed − used, from
 * `/users/{id}/overall_quotas`: 0 units, rule 2, recorded on the ledger when Redis is shared),
 * or null when it cannot be known (no key, no gti.user, the read failed: the run is not refused
 * on a guess).
 */
export async function remainingDailyUnits(ctx: CliContext): Promise<number | null> {
  const { gti, redisUrl, queuePrefix } = ctx.config;
  if (!gti.apiKey || !gti.user) return null;
  const redis = redisUrl ? createRedis(redisUrl, ctx.config) : undefined;
  const ledger = redis ? new QuotaLedger(redis, queuePrefix) : undefined;
  const user = gti.user;
  try {
    // the call is recorded on the ledger: an unreachable Redis would hold it forever
    if (redisUrl) await checkRedis(redisUrl, { ...ctx.config, onWarning: (m) => ctx.log.warn(m) });
    const client = ledgerClient(gti, { ledger });
    type Quota = { allowed?: unknown; used?: unknown } | undefined;
    const doc = (await client.getJson(`/users/${encodeURIComponent(user)}/overall_quotas`)) as {
      data?: { api_requests_daily?: { user?: Quota; group?: Quota } };
    };
    const left = (q: Quota): number | null =>
      typeof q?.allowed === 'number' && typeof q.used === 'number' ? Math.max(0, q.allowed - q.used) : null;
    // the group's quota is shared by its members (rule 8): what is left is the smaller of the two
    const daily = doc.data?.api_requests_daily;
    const known = [left(daily?.user), left(daily?.group)].filter((n): n is number => n !== null);
    return known.length > 0 ? Math.min(...known) : null;
  } catch (err) {
    // a refused key or an unreachable Redis stops here, before anything is spent; anything else only skips the check
    if (errorCode(err) === 'GTI_AUTH' || errorCode(err) === 'REDIS_UNAVAILABLE') throw err;
    ctx.log.warn({ err: (err as Error).message }, 'the daily allowance could not be read: not checked');
    return null;
  } finally {
    redis?.disconnect();
  }
}
