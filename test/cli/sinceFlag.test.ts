import assert from 'node:assert/strict';
import { test } from 'vitest';
import { parseSince } from '../../src/cli/index.js';

test('--since takes a time ago or a UTC date or time, and refuses loose strings', () => {
  const now = Date.UTC(2026, 10, 26, 12, 0, 0);
  assert.equal(parseSince('30m', now), now - 30 * 60_000);
  assert.equal(parseSince('24h', now), now - 86_400_000);
  assert.equal(parseSince('7d', now), now - 7 * 86_400_000);
  assert.equal(parseSince('2W', now), now - 14 * 86_400_000);
  assert.equal(parseSince('20261101', now), Date.UTC(2026, 10, 1));
  assert.equal(parseSince('2026-11-01', now), Date.UTC(2026, 10, 1));
  assert.equal(parseSince('2026-11-01T06:30:00Z', now), Date.UTC(2026, 10, 1, 6, 30));
  // Date.parse alone would take these ("1" is the year 2001)
  for (const bad of ['1', 'yesterday', '24 hours', 'h', '-3d', 'November 1'])
    assert.throws(
      () => parseSince(bad, now),
      (e: Error & { code?: string }) => e.code === 'USAGE' && e.message.includes('30m, 24h, 7d'),
      bad,
    );
});
