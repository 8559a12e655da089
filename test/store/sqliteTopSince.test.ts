import assert from 'node:assert/strict';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { test } from 'vitest';
import { HUNT_END, prepareHuntStore } from '../../bench/huntStore.js';
import { normalizeRecord, type BehaviourDoc } from '../../src/normalize/index.js';
import { openStore, SqliteHuntReader, type PivotSummary } from '../../src/store/index.js';
import { sinkDocOf } from '../../src/wire/index.js';
import { tempDir } from '../support/env.js';

const KINDS = ['behash', 'sigma_rule_id', 'ja3', 'ja3s', 'dropped_sha256'] as const;
// the last 30 days (the whole store), a day, an hour, five minutes, nothing
const WINDOWS = [31 * 86_400, 86_400, 3_600, 300, -60];

/** `top … since` of every kind and window, through one of the two ways (see topSince). */
async function tops(hunt: SqliteHuntReader): Promise<PivotSummary[][]> {
  const out: PivotSummary[][] = [];
  for (const kind of KINDS)
    for (const window of WINDOWS) for (const limit of [3, 1000]) out.push(await hunt.top(kind, { since: HUNT_END - window, limit }));
  return out;
}

test("top since: a window read from its behaviours' pivots answers exactly as one read from all of the kind's rows", async () => {
  const dir = tempDir();
  const { file } = await prepareHuntStore(dir, { behaviours: 4000, seed: 'top-since' }, () => undefined);
  const compare = async (): Promise<number> => {
    const db = new BetterSqlite3(file, { readonly: true });
    try {
      const fromRows = await tops(new SqliteHuntReader(db, 0));
      const fromBehaviours = await tops(new SqliteHuntReader(db, Number.MAX_SAFE_INTEGER));
      assert.deepEqual(fromBehaviours, fromRows);
      // the default picks one of the two: the same answer again
      assert.deepEqual(await tops(new SqliteHuntReader(db)), fromRows);
      return fromRows.reduce((n, t) => n + t.length, 0);
    } finally {
      db.close();
    }
  };
  const values = await compare();
  assert.ok(values > 200, `the windows hold values to compare: ${values}`);

  // newer versions of some behaviours, with another behash and a later date: their old rows go,
  // new ones come, and both ways still agree
  const store = openStore(`sqlite:${file}`);
  try {
    const db = new BetterSqlite3(file, { readonly: true });
    const docs = (db.prepare('SELECT doc FROM behaviours ORDER BY id LIMIT 40').pluck().all() as string[]).map(
      (d) => JSON.parse(d) as BehaviourDoc,
    );
    db.close();
    const newer = docs.map((d, i) => {
      const attributes = { ...d.attributes, behash: `moved-${i % 3}`, analysis_date: HUNT_END - 120, last_modification_date: HUNT_END };
      const r = normalizeRecord({ id: d.id, type: 'file_behaviour', attributes });
      assert.ok(r.ok, JSON.stringify(r));
      return sinkDocOf(r.doc);
    });
    const results = await store.sink.upsert(newer);
    assert.deepEqual(
      results.filter((r) => r.status !== 'ok' || r.stale),
      [],
    );
  } finally {
    await store.close();
  }
  await compare();
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const recent = await new SqliteHuntReader(db, Number.MAX_SAFE_INTEGER).top('behash', { since: HUNT_END - 300 });
    assert.deepEqual(
      recent.filter((s) => s.value.startsWith('moved-')).map((s) => [s.value, s.behaviours]),
      [
        ['moved-0', 14],
        ['moved-1', 13],
        ['moved-2', 13],
      ],
    );
  } finally {
    db.close();
  }
});

test('top since on an empty store: nothing, either way', async () => {
  const file = join(tempDir(), 'empty.db');
  await openStore(`sqlite:${file}`).close();
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    for (const w of [0, Number.MAX_SAFE_INTEGER, undefined])
      assert.deepEqual(await new SqliteHuntReader(db, w).top('ja3', { since: 0 }), []);
  } finally {
    db.close();
  }
});
