import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { sinkDocOf } from '../../src/wire/index.js';
import { entry } from '../store/bookkeepingConformance.js';
import { makeDoc } from '../store/sinkConformance.js';
import { assertBlockedOn } from '../support/blockedOn.js';
import { runCli, startCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

const DAY = 86_400;
const now = (): number => Math.floor(Date.now() / 1000);
const feed = join('sample', 'feed');

/** A store with `ages.length` behaviours, the i-th last modified `ages[i]` days ago, and one dead letter. */
async function storeWith(file: string, ages: number[]): Promise<string[]> {
  const store = openStore(`sqlite:${file}`);
  try {
    const docs = ages.map((age, i) =>
      makeDoc(String(i % 10).repeat(63) + String(i % 7), 'Zenbox', now() - age * DAY, { behash: 'ab'.repeat(16) }),
    );
    const results = await store.sink.upsert(docs.map((d) => sinkDocOf(d)));
    assert.ok(results.every((r) => r.status === 'ok' && !r.stale));
    await store.batches.record(entry('202601010000', (now() - 40 * DAY) * 1000));
    return docs.map((d) => d.id);
  } finally {
    await store.close();
  }
}

const countIn = (file: string, sql: string): number => {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare(sql).pluck().get() as number;
  } finally {
    db.close();
  }
};

test('prune --dry-run counts, prune removes by the behaviour’s own date, then finds nothing', async () => {
  const file = join(tempDir(), 'p.db');
  const ids = await storeWith(file, [40, 35, 31, 20, 2, 1]);
  const env = { SANDTRAIL_STORE: `sqlite:${file}` };

  const dry = await runCli(['prune', '--older-than', '30', '--dry-run', '--json'], { env });
  assert.equal(dry.code, 0, dry.stderr);
  const d = JSON.parse(dry.stdout) as { dryRun: boolean; behaviours: number; batches: number };
  assert.deepEqual([d.dryRun, d.behaviours, d.batches], [true, 3, 1]);
  assert.equal(countIn(file, 'SELECT count(*) FROM behaviours'), 6, 'a dry run removes nothing');

  const run = await runCli(['prune', '--older-than', '30'], { env });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stdout, /^removed 3 behaviour\(s\) last modified before \d{4}-.*; 0 dead letter\(s\), 1 batch-log row\(s\)/);
  assert.equal(countIn(file, 'SELECT count(*) FROM behaviours'), 3);
  assert.equal(
    countIn(file, `SELECT count(*) FROM pivots WHERE id IN ('${ids.slice(0, 3).join("','")}')`),
    0,
    'their pivot rows went with them',
  );
  assert.equal(countIn(file, 'SELECT count(*) FROM pivots'), 3);
  assert.equal(countIn(file, 'SELECT count(*) FROM batches'), 0);

  const again = await runCli(['prune', '--older-than', '30', '--json'], { env });
  assert.equal((JSON.parse(again.stdout) as { behaviours: number }).behaviours, 0);
  // bookkeeping alone, behaviours untouched
  const book = await runCli(['prune', '--bookkeeping-older-than', '1', '--json'], { env });
  assert.equal(book.code, 0, book.stderr);
  assert.equal((JSON.parse(book.stdout) as { behavioursBefore: string | null }).behavioursBefore, null);
  assert.equal(countIn(file, 'SELECT count(*) FROM behaviours'), 3);
});

test('prune refuses bad days with one line naming the flag or setting, and never creates a store', async () => {
  const dir = tempDir();
  const file = join(dir, 'p.db');
  await storeWith(file, [1]);
  const env = { SANDTRAIL_STORE: `sqlite:${file}` };
  for (const bad of ['0', '-3', 'abc', '1.5', '30d', '']) {
    const r = await runCli(['prune', '--older-than', bad], { env });
    assert.equal(r.code, 2, `--older-than "${bad}": ${r.stderr}`);
    assert.match(r.stderr, /--older-than must be a whole number of days from 1 to 36500, got/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  const nothing = await runCli(['prune', '--bookkeeping-older-than', 'off'], { env });
  assert.equal(nothing.code, 2);
  assert.match(nothing.stderr, /prune has nothing to do/);
  const none = await runCli(['prune'], { env });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /prune needs --older-than DAYS \(or the setting retention\.days\)/);
  for (const bad of ['0', '-1', 'soon', '2.5']) {
    const r = await runCli(['prune', '--dry-run'], { env: { ...env, SANDTRAIL_RETENTION_DAYS: bad } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /retention\.days: a whole number of days from 1 to 36500, or off/, r.stderr);
  }
  const viaSetting = await runCli(['prune', '--dry-run', '--json'], { env: { ...env, SANDTRAIL_RETENTION_DAYS: '30' } });
  assert.equal(viaSetting.code, 0, viaSetting.stderr);
  assert.equal((JSON.parse(viaSetting.stdout) as { behaviours: number }).behaviours, 0);

  const missing = join(dir, 'missing.db');
  const r = await runCli(['prune', '--older-than', '5'], { env: { SANDTRAIL_STORE: `sqlite:${missing}` } });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no store at/);
  assert.equal(existsSync(missing), false);
});

test('prune waits for another process writing the store, then removes what expired', async () => {
  const file = join(tempDir(), 'busy.db');
  await storeWith(file, [50, 49, 1]);
  const writer = new BetterSqlite3(file);
  writer.exec('BEGIN IMMEDIATE');
  writer.prepare("UPDATE batches SET source = 'dir:/elsewhere'").run();
  const cli = startCli(['prune', '--older-than', '30', '--json'], { SANDTRAIL_STORE: `sqlite:${file}`, SANDTRAIL_LOG_LEVEL: 'warn' });
  // hold the write lock for a while, as an index stage's transaction would (much longer, in fact)
  await assertBlockedOn(cli.child, file, 2500);
  writer.exec('COMMIT');
  writer.close();
  const r = await cli.exited;
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { behaviours: number }).behaviours, 2);
  assert.equal(countIn(file, 'SELECT count(*) FROM behaviours'), 1);
});

test('a backfill under retention skips behaviours already past it, and its index stage removes the expired ones stored before', async () => {
  const dir = tempDir();
  const file = join(dir, 'r.db');
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_STORE: `sqlite:${file}` };
  const first = await runCli(['backfill', '--source', `dir:${feed}`, '--json'], { env });
  assert.equal(first.code, 0, first.stderr);
  const stored = countIn(file, 'SELECT count(*) FROM behaviours');
  assert.ok(stored > 100);
  const sizeBefore = statSync(file).size;

  // the sample feed's behaviours were last modified on 2026-11-01: a retention of 1 day leaves none
  const pruned = await runCli(['backfill', '--source', `dir:${feed}`, '--json'], {
    env: { ...env, SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_RETENTION_DAYS: '1' },
  });
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal(countIn(file, 'SELECT count(*) FROM behaviours'), 0);
  assert.equal(countIn(file, 'SELECT count(*) FROM pivots'), 0);
  // the batch log is bookkeeping, written now: kept
  assert.ok(countIn(file, "SELECT count(*) FROM batches WHERE status = 'ok'") > 0);
  // freed pages are reused: the same feed stored again does not grow the file
  const again = await runCli(['backfill', '--source', `dir:${feed}`, '--json'], {
    env: { ...env, SANDTRAIL_QUEUE_PREFIX: uniquePrefix() },
  });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(countIn(file, 'SELECT count(*) FROM behaviours'), stored);
  assert.ok(statSync(file).size <= sizeBefore * 1.1, `${statSync(file).size} against ${sizeBefore}`);
}, 120_000);

test('status shows the retention and the oldest behaviour, and alerts while expired behaviours stay', async () => {
  const file = join(tempDir(), 's.db');
  await storeWith(file, [40, 3]);
  const env = { SANDTRAIL_STORE: `sqlite:${file}`, REDIS_URL: '', SANDTRAIL_REDIS_URL: '' };
  const status = async (days: string): Promise<{ alerts: string[]; retention: { days: number | string; oldest_behaviour: string } }> => {
    const r = await runCli(['status', '--json'], { env: { ...env, SANDTRAIL_RETENTION_DAYS: days } });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { alerts: string[]; retention: { days: number | string; oldest_behaviour: string } };
  };
  const off = await status('off');
  assert.equal(off.retention.days, 'off');
  assert.ok(Math.abs(Date.parse(off.retention.oldest_behaviour) / 1000 - (now() - 40 * DAY)) < 60);
  assert.deepEqual(off.alerts, []);
  const late = await status('30');
  assert.equal(late.retention.days, 30);
  assert.equal(late.alerts.length, 1);
  assert.match(late.alerts[0] ?? '', /^retention: behaviours last modified on \d{4}-\d\d-\d\d are still held, more than 30 days ago/);
  const text = await runCli(['status'], { env: { ...env, SANDTRAIL_RETENTION_DAYS: '30' } });
  assert.match(text.stdout, /^retention: 30 days; oldest behaviour last modified \d{4}-/m);
  assert.equal((await runCli(['prune'], { env: { ...env, SANDTRAIL_RETENTION_DAYS: '30' } })).code, 0);
  assert.deepEqual((await status('30')).alerts, []);
});

test('prunes run together on one store: a day another dropped meanwhile is skipped, not a damaged store; the store ends pruned', async () => {
  const file = join(tempDir(), 'together.db');
  const store = openStore(`sqlite:${file}`);
  try {
    // 30 expired days of 200 behaviours each: each prune steps through them for seconds, together
    const docs = Array.from({ length: 6000 }, (_, i) =>
      makeDoc(i.toString(16).padStart(64, '0'), 'Zenbox', now() - (40 + (i % 30)) * DAY, { behash: 'cd'.repeat(16) }),
    );
    await store.sink.upsert(docs.map((d) => sinkDocOf(d)));
  } finally {
    await store.close();
  }
  const env = { SANDTRAIL_RETENTION_STEP_ROWS: '7' };
  const runs = await Promise.all(
    [1, 2, 3].map(() => runCli(['prune', '--older-than', '30', '--store', `sqlite:${file}`, '--json'], { env })),
  );
  assert.deepEqual(
    runs.map((r) => r.code),
    [0, 0, 0],
    runs.map((r) => r.stderr).join('\n'),
  );
  assert.equal(countIn(file, 'SELECT count(*) FROM behaviours'), 0);
  assert.equal(
    runs.reduce((n, r) => n + (JSON.parse(r.stdout) as { behaviours: number }).behaviours, 0),
    6000,
    'each behaviour removed once',
  );
});
