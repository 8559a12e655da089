import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { sinkDocOf } from '../../src/wire/index.js';
import { tempDir } from '../support/env.js';
import { writeKeyedDay, writePreviousLayout } from './previousLayout.js';
import { makeDoc } from './sinkConformance.js';

const dir = tempDir();
let n = 0;
const DAY = 86_400;
/** 2026-11-01 00:00 UTC. */
const NOV1 = Date.UTC(2026, 10, 1) / 1000;
const sha = (i: number): string => i.toString(16).padStart(64, '0');

/** Runs SQL on the store file as a hunter would, with its own connection (read-only). */
function sql<T>(file: string, text: string, ...args: unknown[]): T[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare(text).all(...args) as T[];
  } finally {
    db.close();
  }
}

const tables = (file: string): string[] =>
  sql<{ name: string }>(file, "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB '[bp][ei]*_*' ORDER BY name").map(
    (r) => r.name,
  );

async function withStore<T>(file: string, fn: (s: Store) => Promise<T>, o: Parameters<typeof openStore>[1] = {}): Promise<T> {
  const store = openStore(`sqlite:${file}`, o);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

test('behaviours are stored in one pair of tables per day of their last modification, behind the views hunters query', async () => {
  const file = join(dir, `days${n++}.db`);
  const docs = [0, 1, 2, 3, 4, 5].map((i) => makeDoc(sha(i), 'Zenbox', NOV1 + (i % 3) * DAY + 60 * i, { behash: `b${i % 2}` }));
  await withStore(file, async (s) => {
    const results = await s.sink.upsert(docs.map((d) => sinkDocOf(d)));
    assert.deepEqual(
      results.map((r) => r.status),
      Array(6).fill('ok'),
    );
  });
  assert.deepEqual(tables(file), [
    'behaviour_days',
    'behaviours_2026_11_01',
    'behaviours_2026_11_02',
    'behaviours_2026_11_03',
    'pivots_2026_11_01',
    'pivots_2026_11_02',
    'pivots_2026_11_03',
  ]);
  assert.deepEqual(
    sql(file, "SELECT type, name FROM sqlite_master WHERE name IN ('behaviours', 'pivots') ORDER BY name"),
    [{ type: 'view', name: 'behaviours' }, { type: 'view', name: 'pivots' }],
  ); // prettier-ignore
  assert.deepEqual(sql(file, 'SELECT count(*) AS n FROM behaviours_2026_11_02'), [{ n: 2 }]);
  assert.deepEqual(sql(file, "SELECT value, count(*) AS n FROM pivots WHERE kind = 'behash' GROUP BY value"), [
    { value: 'b0', n: 3 },
    { value: 'b1', n: 3 },
  ]);
  // the sqlite3 shell, opened on the file alone, answers over every day
  const shell = execFileSync('sqlite3', ['-readonly', file, 'SELECT count(*), count(DISTINCT id) FROM behaviours;'], { encoding: 'utf8' });
  assert.equal(shell.trim(), '6|6');
  await withStore(file, async (s) => {
    assert.equal(await s.sink.count(), 6);
    const stats = await s.hunt.pivotStats('behash', 'b0');
    assert.deepEqual(
      stats.newest.map((l) => l.id),
      [docs[2], docs[4], docs[0]].map((d) => d?.id),
    );
  });
});

test('a newer version moves its behaviour to its day; a stale replay changes nothing; retention drops a day whole', async () => {
  const file = join(dir, `moves${n++}.db`);
  const v1 = makeDoc(sha(1), 'Zenbox', NOV1 + 100, { behash: 'old' });
  const v2 = makeDoc(sha(1), 'Zenbox', NOV1 + 2 * DAY + 100, { behash: 'new' });
  const other = makeDoc(sha(2), 'Zenbox', NOV1 + 200, { behash: 'old' });
  await withStore(file, async (s) => {
    await s.sink.upsert([v1, other].map((d) => sinkDocOf(d)));
    assert.deepEqual((await s.sink.upsert([sinkDocOf(v2)]))[0]?.status, 'ok');
    const stale = await s.sink.upsert([sinkDocOf(v1)]);
    assert.deepEqual(stale, [{ id: v1.id, status: 'ok', stale: true }]);
    assert.equal((await s.sink.get(v1.id))?.attributes.last_modification_date, NOV1 + 2 * DAY + 100);
    assert.deepEqual(await s.sink.query('behash', 'old'), [other.id]);
    assert.deepEqual(await s.sink.query('behash', 'new'), [v1.id]);
  });
  assert.deepEqual(sql(file, 'SELECT id FROM behaviours_2026_11_01'), [{ id: other.id }]);
  assert.deepEqual(sql(file, 'SELECT id, day FROM behaviour_days ORDER BY id'), [
    { id: v1.id, day: NOV1 / DAY + 2 },
    { id: other.id, day: NOV1 / DAY },
  ]);
  // retention of 1 day at Nov 3, 12:00: Nov 1 is past whole, Nov 3 is kept
  const now = (): number => (NOV1 + 2 * DAY + DAY / 2) * 1000;
  await withStore(
    file,
    async (s) => {
      const r = await s.retention.prune({ behavioursBefore: NOV1 + DAY + DAY / 2 });
      assert.deepEqual([r.behaviours, r.done], [1, true]);
      assert.equal(await s.sink.count(), 1);
      assert.equal(await s.retention.oldest(), NOV1 + 2 * DAY + 100);
      // an expired write does not bring the day back
      const expired = await s.sink.upsert([sinkDocOf(makeDoc(sha(3), 'Zenbox', NOV1 + 5, {}))]);
      assert.deepEqual(expired, [{ id: `${sha(3)}_Zenbox`, status: 'ok', stale: true, expired: true }]);
    },
    { retention: { days: 1 }, now },
  );
  assert.deepEqual(tables(file), ['behaviour_days', 'behaviours_2026_11_03', 'pivots_2026_11_03']);
  assert.deepEqual(sql(file, 'SELECT count(*) AS n FROM pivots'), [{ n: 1 }]);
});

test('a day whose pivot rows are keyed as before keeps that layout beside new days, and answers as they do', async () => {
  const verdictsOf = (i: number): string[] => (i % 5 === 0 ? [] : i % 5 === 1 ? ['MALWARE', 'TROJAN'] : ['MALWARE']);
  const v1 = Array.from({ length: 60 }, (_, i) =>
    makeDoc(sha(i), i % 3 === 0 ? 'CAPE Sandbox' : 'Zenbox', NOV1 + (i % 2) * DAY + i, {
      behash: `b${i % 4}`,
      verdicts: verdictsOf(i),
      sigma_analysis_results: [{ rule_id: `s${i % 3}` }, { rule_id: `s${i % 7}` }],
      ja3_digests: [(i % 6).toString(16).repeat(32)],
    }),
  );
  // newer versions of a third of them, on Nov 2, with other values and verdicts: their Nov 1 rows go
  const v2 = v1
    .filter((_, i) => i % 3 === 0)
    .map((d, j) => makeDoc(d.sha256, d.sandbox_name, NOV1 + DAY + 1000 + j, { behash: `b${j % 2}`, verdicts: ['SUSPICIOUS'] }));
  const write = async (s: Store): Promise<void> => {
    await s.sink.upsert(v1.slice(0, 30).map((d) => sinkDocOf(d)));
    await s.sink.upsert(v1.slice(30).map((d) => sinkDocOf(d)));
    await s.sink.upsert(v2.map((d) => sinkDocOf(d)));
    // replays: the stale first versions and the second versions again change nothing
    await s.sink.upsert([...v1, ...v2].map((d) => sinkDocOf(d)));
  };
  const mixed = join(dir, `keyed${n++}.db`);
  const fresh = join(dir, `grouped${n++}.db`);
  await withStore(mixed, async () => undefined);
  const db = new BetterSqlite3(mixed);
  writeKeyedDay(db, '2026_11_01');
  db.close();
  await withStore(mixed, write);
  await withStore(fresh, write);

  const master = (file: string): unknown[] =>
    sql(file, "SELECT name, type FROM sqlite_master WHERE name GLOB 'pivots_2026_11_0*' ORDER BY name");
  assert.deepEqual(master(mixed), [
    { name: 'pivots_2026_11_01', type: 'table' },
    { name: 'pivots_2026_11_01_groups', type: 'index' },
    { name: 'pivots_2026_11_02', type: 'table' },
  ]);
  assert.deepEqual(master(fresh), [
    { name: 'pivots_2026_11_01', type: 'table' },
    { name: 'pivots_2026_11_02', type: 'table' },
  ]);
  const keyOf = (file: string, table: string): string | undefined =>
    /PRIMARY KEY \(([^)]*)\)/.exec(sql<{ sql: string }>(file, 'SELECT sql FROM sqlite_master WHERE name = ?', table)[0]?.sql ?? '')?.[1];
  assert.equal(keyOf(mixed, 'pivots_2026_11_01'), 'kind, value, id');
  assert.equal(keyOf(mixed, 'pivots_2026_11_02'), 'kind, value, sandbox_name, verdicts, id');

  // every read answers alike from either store, and no pivot row outlives its behaviour's version
  const rows = 'SELECT kind, value, id, analysis_date, sandbox_name, verdicts FROM pivots ORDER BY kind, value, id';
  const orphans = `SELECT count(*) AS n FROM pivots p WHERE NOT EXISTS (SELECT 1 FROM behaviours b WHERE b.id = p.id
    AND b.sandbox_name = p.sandbox_name AND b.verdicts = p.verdicts AND b.analysis_date IS p.analysis_date)`;
  const reads = (file: string): Promise<unknown> =>
    withStore(file, async (s) => ({
      stats: await Promise.all(['b0', 'b1', 'b2', 'b3'].map((v) => s.hunt.pivotStats('behash', v))),
      sigma: await s.hunt.pivotStats('sigma_rule_id', 's1'),
      top: await Promise.all((['behash', 'sigma_rule_id', 'ja3'] as const).map((k) => s.hunt.top(k))),
      since: await s.hunt.top('behash', { since: NOV1 + DAY }),
      related: await Promise.all([v1[0], v1[1], v1[4]].map((d) => s.hunt.related(d?.id as string))),
      query: await s.sink.query('behash', 'b1'),
    }));
  const live = [...v1.filter((_, i) => i % 3 !== 0), ...v2];
  const expected = live.reduce((k, d) => k + 1 + new Set(d.pivots.sigma_rule_ids).size + d.pivots.ja3.length, 0);
  assert.equal(sql(mixed, rows).length, expected);
  assert.deepEqual(sql(mixed, rows), sql(fresh, rows));
  assert.deepEqual(sql(mixed, orphans), [{ n: 0 }]);
  assert.deepEqual(await reads(mixed), await reads(fresh));

  // retention removing part of the keyed day finds its rows as it finds a new day's
  const prune = (file: string): Promise<unknown> => withStore(file, (s) => s.retention.prune({ behavioursBefore: NOV1 + 30 }));
  assert.deepEqual(await prune(mixed), await prune(fresh));
  assert.deepEqual(sql(mixed, rows), sql(fresh, rows));
  assert.deepEqual(sql(mixed, orphans), [{ n: 0 }]);
  assert.deepEqual(await reads(mixed), await reads(fresh));
});

test('a store from before the split keeps its tables as the undated partition until retention empties it', async () => {
  const file = join(dir, `legacy${n++}.db`);
  const docs = [0, 1, 2].map((i) => makeDoc(sha(i), 'Zenbox', NOV1 + i * DAY, { behash: 'b' }));
  const old = new BetterSqlite3(file);
  writePreviousLayout(old, docs);
  old.close();
  await withStore(file, async (s) => {
    assert.equal(await s.sink.count(), 3);
    assert.equal((await s.hunt.pivotStats('behash', 'b')).behaviours, 3);
    // a newer version of one of its behaviours moves to its day
    await s.sink.upsert([sinkDocOf(makeDoc(sha(0), 'Zenbox', NOV1 + 3 * DAY, { behash: 'b' }))]);
  });
  assert.deepEqual(tables(file), ['behaviour_days', 'behaviours_2026_11_04', 'behaviours_undated', 'pivots_2026_11_04', 'pivots_undated']);
  assert.deepEqual(sql(file, 'SELECT count(*) AS n FROM behaviours_undated'), [{ n: 2 }]);
  await withStore(file, async (s) => {
    assert.equal((await s.hunt.pivotStats('behash', 'b')).behaviours, 3);
    // a dry run names what the prune drops, the undated tables included
    const dry = await s.retention.prune({ behavioursBefore: NOV1 + 3 * DAY, dryRun: true });
    assert.deepEqual([dry.behaviours, dry.partitions], [2, ['behaviours_undated', 'pivots_undated']]);
    assert.deepEqual((await s.retention.prune({ behavioursBefore: NOV1 + DAY, dryRun: true })).partitions, [], 'one of the two left');
    const r = await s.retention.prune({ behavioursBefore: NOV1 + 3 * DAY });
    assert.equal(r.behaviours, 2);
    assert.deepEqual(r.partitions, dry.partitions);
  });
  assert.deepEqual(tables(file), ['behaviour_days', 'behaviours_2026_11_04', 'pivots_2026_11_04']);
});

test('a store of more days than one compound SELECT may name nests its views; a reader sees days another connection adds and drops', async () => {
  const file = join(dir, `many${n++}.db`);
  const docs = Array.from({ length: 450 }, (_, i) => makeDoc(sha(i), 'Zenbox', NOV1 - i * DAY, { behash: `b${i % 3}` }));
  const reader = openStore(`sqlite:${file}`);
  try {
    assert.equal(await reader.sink.count(), 0);
    await withStore(file, async (s) => {
      assert.deepEqual(
        (await s.sink.upsert(docs.map((d) => sinkDocOf(d)))).filter((r) => r.status !== 'ok'),
        [],
      );
    });
    assert.deepEqual(sql(file, 'SELECT count(*) AS n FROM behaviours'), [{ n: 450 }]);
    assert.deepEqual(
      sql<{ name: string }>(file, "SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name").map((r) => r.name),
      ['behaviours', 'behaviours_span_0', 'behaviours_span_1', 'pivots', 'pivots_span_0', 'pivots_span_1'],
    );
    // the reader opened before any day existed answers over all of them
    assert.equal((await reader.hunt.pivotStats('behash', 'b0')).behaviours, 150);
    assert.equal((await reader.sink.get(docs[449]?.id as string))?.id, docs[449]?.id);
    await withStore(file, async (s) => {
      const r = await s.retention.prune({ behavioursBefore: NOV1 - 99 * DAY });
      assert.equal(r.behaviours, 350);
    });
    assert.equal((await reader.hunt.pivotStats('behash', 'b0')).behaviours, 34);
    assert.equal(await reader.sink.get(docs[449]?.id as string), null);
    assert.equal(
      (await reader.hunt.top('behash', { since: 0 })).reduce((a, t) => a + t.behaviours, 0),
      100,
    );
    assert.equal(tables(file).length, 1 + 2 * 100);
  } finally {
    await reader.close();
  }
});

test('a file whose reports fall on several days counts once in a value’s files, whatever the order of the days', async () => {
  const file = join(dir, `files${n++}.db`);
  // file 1 on three days (three sandboxes), file 2 on days 1 and 3, file 3 on day 2 only
  const docs = [
    makeDoc(sha(1), 'Zenbox', NOV1 + 10, { behash: 'v' }),
    makeDoc(sha(1), 'CAPE Sandbox', NOV1 + DAY + 10, { behash: 'v' }),
    makeDoc(sha(1), 'Lastline', NOV1 + 2 * DAY + 10, { behash: 'v' }),
    makeDoc(sha(2), 'Zenbox', NOV1 + 2 * DAY + 20, { behash: 'v' }),
    makeDoc(sha(2), 'Lastline', NOV1 + 20, { behash: 'v' }),
    makeDoc(sha(3), 'Zenbox', NOV1 + DAY + 30, { behash: 'v' }),
  ];
  await withStore(file, async (s) => {
    await s.sink.upsert(docs.map((d) => sinkDocOf(d)));
    const stats = await s.hunt.pivotStats('behash', 'v');
    assert.deepEqual([stats.behaviours, stats.files], [6, 3]);
    const [top] = await s.hunt.top('behash', { since: NOV1 + DAY });
    assert.deepEqual([top?.behaviours, top?.files], [4, 3]);
  });
  assert.equal(tables(file).length, 1 + 2 * 3);
});
