import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { writeFeed } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';
import { addMinutes } from '../../src/minute/index.js';

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
