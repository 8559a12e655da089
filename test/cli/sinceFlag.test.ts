import assert from 'node:assert/strict';
import { test } from 'vitest';
import { spawnSync } from 'node:child_process';
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
  // without a zone a time is UTC, whatever the machine's zone (the next test runs it under TZ=America/New_York)
  assert.equal(parseSince('2026-11-01T00:05:00', now), Date.UTC(2026, 10, 1, 0, 5));
  assert.equal(parseSince('2026-10-31 23:00', now), Date.UTC(2026, 9, 31, 23, 0));
  assert.equal(parseSince('2026-11-01T06:30:15.250', now), Date.UTC(2026, 10, 1, 6, 30, 15, 250));
  assert.equal(parseSince('2026-11-01T08:30+02:00', now), Date.UTC(2026, 10, 1, 6, 30));
  assert.equal(parseSince('2026-11-01T01:00-0530', now), Date.UTC(2026, 10, 1, 6, 30));
  // Date.parse alone would take these ("1" is the year 2001; 2026-02-30 is 2 March)
  for (const bad of [
    '1',
    'yesterday',
    '24 hours',
    'h',
    '-3d',
    'November 1',
    '2026-02-30',
    '20260230',
    '2026-13-01',
    '2026-11-01T24:00',
    '2026-11-01T10:61',
  ])
    assert.throws(
      () => parseSince(bad, now),
      (e: Error & { code?: string }) => e.code === 'USAGE' && e.message.includes('30m, 24h, 7d'),
      bad,
    );
});

test('a --since time without a zone means the same instant on a machine in another zone', () => {
  // the zone is read when a process starts: a child under TZ=America/New_York parses the same text
  const code = `import('./src/cli/index.ts').then((m) => console.log(m.parseSince('2026-11-01T00:05:00')))`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], {
    env: { ...process.env, TZ: 'America/New_York' },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(Number(r.stdout.trim()), Date.UTC(2026, 10, 1, 0, 5));
});
