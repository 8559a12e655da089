import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { msToMinute } from '../../src/minute/index.js';
import { runCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

const hex = (i: number): string => createHash('sha256').update(`undated-${i}`).digest('hex');
const line = (i: number, attributes: Record<string, unknown>): string =>
  JSON.stringify({ type: 'file_behaviour', id: `${hex(i)}_Zenbox`, attributes: { behash: `b${i}`, ...attributes } });

test('under retention, a record with no date is kept as its minute is, and one dated in milliseconds neither outranks nor outlives the rest', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  mkdirSync(feed);
  // a minute of an hour ago: well inside 30 days of retention
  const minute = msToMinute(Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000);
  const minuteS =
    Date.UTC(+minute.slice(0, 4), +minute.slice(4, 6) - 1, +minute.slice(6, 8), +minute.slice(8, 10), +minute.slice(10)) / 1000;
  const text = [
    line(1, {}),
    line(2, { last_modification_date: minuteS * 1000 + 123, analysis_date: minuteS - 60 }),
    line(3, { last_modification_date: minuteS - 120 }),
  ].join('\n');
  writeFileSync(join(feed, `${minute}.jsonl.bz2`), spawnSync('bzip2', ['-c'], { input: text }).stdout);
  const file = join(dir, 'a.db');
  const env = {
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_STORE: `sqlite:${file}`,
    SANDTRAIL_RETENTION_DAYS: '30',
  };
  const bf = await runCli(['backfill', '--source', `dir:${feed}`, '--json'], { env });
  assert.equal(bf.code, 0, bf.stderr);
  assert.deepEqual(JSON.parse(bf.stdout).records, { indexed: 3, rejected: 0 });
  assert.doesNotMatch(bf.stderr, /were not stored/, 'nothing was dropped as expired');
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT sha256, last_modification_date AS lmd FROM behaviours ORDER BY sha256').all() as {
      sha256: string;
      lmd: number;
    }[];
    const lmdOf = new Map(rows.map((r) => [r.sha256, r.lmd]));
    assert.equal(rows.length, 3);
    assert.equal(lmdOf.get(hex(1)), minuteS, 'no date at all: the start of its minute, not 1970');
    assert.equal(lmdOf.get(hex(2)), minuteS - 60, 'a date in milliseconds is dropped for analysis_date');
    assert.equal(lmdOf.get(hex(3)), minuteS - 120);
  } finally {
    db.close();
  }
});
