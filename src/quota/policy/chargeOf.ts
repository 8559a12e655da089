import type { Charge } from './Charge.js';
import type { TimedOperation } from './Operation.js';
import { applyStateChanges, readerOf, type PolicyState, type StateChange } from './PolicyState.js';
import { priceOperation } from './priceOperation.js';

/** chargeOf's answer: the price, the state after the operation, and the changes that lead there. */
export interface ChargeResult {
  charge: Charge;
  /** The state after the operation: the input itself when nothing changed, else a new object sharing untouched parts; the input is never mutated. */
  state: PolicyState;
  /** What a ledger must persist to stay in step (rule 6 grants, livehunt marks); empty when nothing changed. */
  stateChanges: StateChange[];
}

/**
 * Prices one operation by the spec's 15 quota rules. The charge is per account: rule 8 makes it
 * count for the user and again for the group when the operation has one (see accountsOf), and
 * periodBuckets says which period buckets each kind's units land in.
 */
export function chargeOf(op: TimedOperation, state: PolicyState): ChargeResult {
  const { charge, stateChanges } = priceOperation(op, readerOf(state));
  return { charge, state: stateChanges.length === 0 ? state : applyStateChanges(state, stateChanges), stateChanges };
}
