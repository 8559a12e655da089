import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BudgetGuard, estimate, formatEstimate } from '../../src/quota/index.js';

const e = estimate([
  { what: 'GET /feeds/file_behaviours/{minute}', count: 60, apiUnitsEach: 0, rules: [3] },
  { what: 'GET /files/{sha256}', count: 25, apiUnitsEach: 1, rules: [1] },
]);

test('an estimate sums units by rule and prints each line with its rule', () => {
  assert.equal(e.apiUnits, 25);
  const text = formatEstimate(e);
  assert.match(text, /estimated API units: 25/);
  assert.match(text, /GET \/feeds\/file_behaviours\/\{minute\}: 60 × 0 API unit\(s\) = 0 {2}\(rule 3\)/);
});

test('a run whose estimate exceeds the remaining daily allowance refuses to start without --force', () => {
  assert.throws(
    () => new BudgetGuard({ remainingDaily: 10 }).preflight(e),
    (err: { code: string; message: string }) => err.code === 'BUDGET_EXCEEDED' && /--force/.test(err.message),
  );
  assert.doesNotThrow(() => new BudgetGuard({ remainingDaily: 10, force: true }).preflight(e));
  assert.doesNotThrow(() => new BudgetGuard({ remainingDaily: 25 }).preflight(e));
  assert.doesNotThrow(() => new BudgetGuard({ remainingDaily: null }).preflight(e), 'unknown allowance does not block');
});

test('--max-api-units stops before exceeding N, free calls never stop', () => {
  const g = new BudgetGuard({ maxApiUnits: 3 });
  g.spend(1);
  g.spend(0);
  g.spend(2);
  assert.throws(
    () => g.spend(1),
    (err: { code: string }) => err.code === 'BUDGET_EXCEEDED',
  );
  g.spend(0);
  assert.equal(g.spentApiUnits, 3);
});
