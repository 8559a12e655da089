import assert from 'node:assert/strict';
import { test } from 'vitest';
import { Rng } from '../../src/synth/index.js';

test('same seed gives the same sequence, different seeds differ', () => {
  const draw = (seed: number | string): number[] => {
    const r = new Rng(seed);
    return Array.from({ length: 50 }, () => r.u32());
  };
  assert.deepEqual(draw(42), draw(42));
  assert.deepEqual(draw('abc'), draw('abc'));
  assert.notDeepEqual(draw(42), draw(43));
  assert.notDeepEqual(draw(0), draw(1));
});

test('helpers stay in range and hex is lower-case hex of the asked length', () => {
  const r = new Rng(7);
  for (let i = 0; i < 2000; i++) {
    const f = r.next();
    assert.ok(f >= 0 && f < 1);
    const n = r.range(3, 9);
    assert.ok(n >= 3 && n <= 9 && Number.isInteger(n));
    assert.ok(r.int(5) < 5);
    assert.ok(r.skewedIndex(10) < 10);
  }
  for (const len of [1, 7, 8, 32, 40, 63, 64]) assert.match(r.hex(len), new RegExp(`^[0-9a-f]{${len}}$`));
  assert.equal(r.chance(0), false);
});

test('the output is roughly uniform', () => {
  const r = new Rng(99);
  const buckets = new Array<number>(10).fill(0);
  for (let i = 0; i < 100_000; i++) buckets[r.int(10)]! += 1;
  for (const b of buckets) assert.ok(b > 9_500 && b < 10_500, `bucket ${b}`);
});
