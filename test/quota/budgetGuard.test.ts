import assert from 'node:assert/strict';
import { test } from 'vitest';
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
  assert.equal(e.atLeast, false);

  // a line whose calls depend on the answers (further pages, artefacts) makes the total a floor
  const open = estimate([...e.lines, { what: 'GET /file_behaviours/{id}/pcap', count: 0, apiUnitsEach: 1, rules: [1], open: true }]);
  assert.equal(open.atLeast, true);
  assert.equal(open.apiUnits, 25);
  const openText = formatEstimate(open);
  assert.match(openText, /^estimated API units: at least 25 \(lines marked \+ depend on the answers/);
  assert.match(openText, /GET \/file_behaviours\/\{id\}\/pcap: 0\+ × 1 API unit\(s\) = 0\+/);
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

test('the guard stops a client before the call that would exceed --max-api-units; free calls go through', async () => {
  const { startFakeGti } = await import('../support/fakeGti.js');
  const { GtiClient } = await import('../../src/gti/index.js');
  const { apiUnitsOf } = await import('../../src/cli/index.js');
  const fake = await startFakeGti({
    apiKey: 'k',
    quotas: { u: { api_requests_daily: { user: { allowed: 10, used: 0 } } } },
    unmetered: 'the bare client with a guard of its own: no ledger',
  });
  try {
    const guard = new BudgetGuard({ maxApiUnits: 1 });
    const client = new GtiClient({
      baseUrl: fake.baseUrl,
      apiKey: 'k',
      timeoutMs: 5000,
      beforeCall: (c) => guard.spend(apiUnitsOf(c.method, c.path)),
    });
    await client.getJson('/users/u/overall_quotas'); // rule 2: free
    await assert.rejects(client.getJson(`/files/${'a'.repeat(64)}`), (e: { code: string }) => e.code === 'GTI_NOT_FOUND'); // 1 unit, answered
    await assert.rejects(client.getJson(`/files/${'b'.repeat(64)}`), (e: { code: string }) => e.code === 'BUDGET_EXCEEDED');
    await client.getJson('/users/u/overall_quotas');
    assert.deepEqual(
      fake.requests.map((r) => r.path),
      ['/api/v3/users/u/overall_quotas', `/api/v3/files/${'a'.repeat(64)}`, '/api/v3/users/u/overall_quotas'],
    );
  } finally {
    await fake.close();
  }
});
