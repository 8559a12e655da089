import type { QuotaKind } from './QuotaKind.js';

/**
 * What one operation costs. `units` names every kind the operation touches, with 0 where a rule
 * waives the charge (a feed read is `{ api_requests: 0 }`), so a ledger can show that the call
 * was seen and cost nothing; kinds it never touches are absent.
 */
export interface Charge {
  units: Partial<Record<QuotaKind, number>>;
  /** The spec §Limits rule numbers that decided the price, e.g. `[3]`. */
  rules: number[];
  /** A short human explanation citing the rule(s). */
  reason: string;
}
