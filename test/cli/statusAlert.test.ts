import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { writeFeed } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';
import { addMinutes } from '../../src/minute/index.js';
import { openStore } from '../../src/store/index.js';
import { entry } from '../store/bookkeepingConformance.js';

test('consecutive missing minutes beyond the configured number raise an alert in status; fewer do not', async () => {
  const dir = tempDir();
  const start = '202611070000';
  const gap = [1, 2, 3].map((i) => addMinutes(start, i));
  await writeFeed({
    out: join(dir, 'feed'),
    seed: 2,
    start,
    minutes: 8,
    perMinute: 3,
    malformedRate: 0,
    missingMinutes: [...gap, addMinutes(start, 6)],
  });
  const env = {
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_STORE: `sqlite:${join(dir, 'a.db')}`,
    SANDTRAIL_FEED_MISSING_ALERT_MINUTES: '3',
  };
  const bf = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`, '--json'], { env });
  assert.deepEqual(JSON.parse(bf.stdout).batches, { ok: 4, empty: 0, missing: 4, failed: 0, pending: 0 });
  const s = JSON.parse((await runCli(['status', '--json'], { env })).stdout) as { alerts: string[]; gaps: string[] };
  assert.deepEqual(s.gaps, [...gap, addMinutes(start, 6)]);
  assert.deepEqual(s.alerts, [`3 consecutive minutes missing: ${gap[0]} to ${gap[2]}`]);
});

test('a long run of missing minutes raises its alert once, not once per minute past the threshold', async () => {
  const dir = tempDir();
  const start = '202611080000';
  const gap = [1, 2, 3, 4, 5, 6, 7].map((i) => addMinutes(start, i));
  await writeFeed({ out: join(dir, 'feed'), seed: 3, start, minutes: 10, perMinute: 2, malformedRate: 0, missingMinutes: gap });
  const env = {
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_STORE: `sqlite:${join(dir, 'a.db')}`,
    SANDTRAIL_FEED_MISSING_ALERT_MINUTES: '3',
  };
  const bf = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`, '--json'], { env });
  assert.equal(bf.code, 0, bf.stderr);
  const alerts = bf.stderr.split('\n').filter((l) => l.includes('consecutive_missing'));
  assert.equal(alerts.length, 1, alerts.join('\n'));
  assert.equal((JSON.parse(alerts[0] as string) as { through: string }).through, gap[2]);
  // status names the run by its ends, not minute by minute
  const status = await runCli(['status'], { env });
  // a minute not stored whole is not said indexed
  for (const l of status.stdout.split('\n').filter((x) => /^ {2}\d{12} /.test(x))) assert.equal(/ ok /.test(l), / indexed,/.test(l), l);
  assert.match(status.stdout, new RegExp(`^gaps \\(missing minutes\\): ${gap[0]} to ${gap[6]} \\(7 minutes\\)$`, 'm'), status.stdout);
});

test('gaps, alerts and lag go by the newest minutes, not by the batches finished last (lookups, a backfill of older minutes)', async () => {
  const dir = tempDir();
  const file = join(dir, 'a.db');
  const start = '202611090000';
  const store = openStore(`sqlite:${file}`);
  try {
    const missing = { status: 'missing' as const, lines: 0, accepted: 0, rejected: 0, chunks: 0, bytesDecoded: 0 };
    for (let i = 0; i < 6; i++)
      await store.batches.record(entry(addMinutes(start, i), 1000 + i, i >= 2 && i <= 4 ? missing : { chunks: 0 }));
    // then 1,500 lookups and a backfill of older minutes, all finished after the live minutes
    for (let i = 0; i < 1500; i++)
      await store.batches.record(entry(`lookup-${i.toString(16).padStart(64, '0')}`, 5000 + i, { source: 'api', chunks: 0 }));
    for (let i = 0; i < 30; i++) await store.batches.record(entry(addMinutes('202611010000', i), 9000 + i, { chunks: 0 }));
  } finally {
    await store.close();
  }
  const env = { SANDTRAIL_STORE: `sqlite:${file}`, SANDTRAIL_FEED_MISSING_ALERT_MINUTES: '3' };
  const out = await runCli(['status', '--json', '--last', '2'], { env });
  assert.equal(out.code, 0, out.stderr);
  const s = JSON.parse(out.stdout) as { alerts: string[]; gaps: string[]; recent_batches: { batch: string }[]; lag_seconds: number };
  const gap = [2, 3, 4].map((i) => addMinutes(start, i));
  assert.deepEqual(s.gaps, gap);
  assert.deepEqual(s.alerts, [`3 consecutive minutes missing: ${gap[0]} to ${gap[2]}`]);
  assert.deepEqual(
    s.recent_batches.map((b) => b.batch),
    [addMinutes(start, 5), addMinutes(start, 4)],
  );
  // done through the newest minute, not through the older minutes backfilled last
  const lag = Math.round((Date.now() - Date.UTC(2026, 10, 9, 0, 6)) / 1000);
  assert.ok(Math.abs(s.lag_seconds - lag) <= 30, `lag ${s.lag_seconds} s, expected about ${lag} s`);
});
