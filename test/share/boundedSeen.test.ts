import assert from 'node:assert/strict';
import { test } from 'vitest';
import { BoundedSeen } from '../../src/share/index.js';

test('BoundedSeen: an id once while remembered; an id seen again stays remembered; the oldest are forgotten past the cap', () => {
  const seen = new BoundedSeen(10);
  assert.equal(seen.add('a'), true);
  assert.equal(seen.add('a'), false);
  // 'a' offered again all along stays remembered whatever passes by
  for (let i = 0; i < 100; i++) {
    assert.equal(seen.add(`x${i}`), true);
    assert.equal(seen.add('a'), false, `a at ${i}`);
  }
  // x0 went by long ago: forgotten, so offered as new again; the last few are remembered
  assert.equal(seen.add('x0'), true);
  assert.equal(seen.add('x99'), false);
  assert.equal(seen.add('x98'), false);
  // never more than the cap remembered: of 1,000 new ids, the first ones are all forgotten
  for (let i = 0; i < 1000; i++) seen.add(`y${i}`);
  let remembered = 0;
  for (let i = 0; i < 1000; i++) if (!seen.add(`y${i}`)) remembered++;
  assert.ok(remembered <= 10, `${remembered} remembered`);
});
