import assert from 'node:assert/strict';
import { test } from 'vitest';
import { FailedAuth } from '../../src/ops/index.js';

test('wrong credentials per address: the limit-th within the window holds the address off for the rest of it; other addresses are untouched; the map stays bounded', () => {
  let now = 1_000_000;
  const f = new FailedAuth({ limit: 3, windowMs: 60_000, maxAddresses: 2, now: () => now });
  assert.equal(f.failed('10.0.0.1'), false);
  now += 1000;
  assert.equal(f.failed('10.0.0.1'), false);
  assert.equal(f.heldFor('10.0.0.1'), 0, 'below the limit: not held');
  now += 1000;
  assert.equal(f.failed('10.0.0.1'), true, 'the limit-th failure is the one said');
  assert.equal(f.heldFor('10.0.0.1'), 58_000, 'held for what is left of the window that began at its first failure');
  assert.equal(f.failed('10.0.0.1'), false, 'said once');
  assert.equal(f.heldFor('10.0.0.2'), 0);
  now += 58_000;
  assert.equal(f.heldFor('10.0.0.1'), 0, 'the window over: let through again');
  assert.equal(f.failed('10.0.0.1'), false, 'a new window counts from one');

  // two addresses at most: the one seen least recently is forgotten
  f.failed('10.0.0.2');
  f.failed('10.0.0.3');
  for (let i = 0; i < 3; i++) f.failed('10.0.0.3');
  assert.ok(f.heldFor('10.0.0.3') > 0);
  // counted from one again: its third failure now is the limit-th (remembered, it would have been its fourth)
  for (let i = 0; i < 2; i++) assert.equal(f.failed('10.0.0.1'), false);
  assert.equal(f.failed('10.0.0.1'), true, "10.0.0.1's earlier failure was forgotten when 10.0.0.3 came");
});
