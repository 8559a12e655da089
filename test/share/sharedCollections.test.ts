/**
 * A watch's collection follows its hits: a sync reads from its position, which stays
 * HIT_OVERLAP_MS behind the clock of the read, so a hit recorded late (a worker's clock behind,
 * a slow commit) is still read, and hits older than that are not read again on every request.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { HIT_OVERLAP_MS, saveExport, syncWatchCollection, watchCollectionId } from '../../src/share/index.js';
import { openStore, type WatchHit } from '../../src/store/index.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';
import { cleanup, tempDir } from '../support/env.js';

const SHA = (c: string): string => c.repeat(64);
const BEHASH = 'b'.repeat(32);

test('a sync reads each hit once it is settled, a late one included, and moves its position no closer than the overlap', async () => {
  const store = openStore(`sqlite:${join(tempDir(), 'sync.db')}`);
  cleanup(() => store.close());
  const docs = ['1', '2', '3', '4'].map((c) => makeDoc(SHA(c), 'Zenbox', 1_793_491_200, { behash: BEHASH, verdicts: ['MALWARE'] }));
  assert.ok((await store.sink.upsert(sinkDocs(docs))).every((r) => r.status === 'ok'));
  const watch = await store.watches.add({ name: 'w', conditions: [{ kind: 'behash', value: BEHASH }], notify: {}, createdAt: 1 });
  const hit = async (i: number, at: number): Promise<void> => {
    const d = docs[i]!;
    const h: WatchHit = {
      watch: 'w',
      behaviourId: d.id,
      lastModified: d.last_modification_date,
      sha256: d.sha256,
      sandbox: d.sandbox_name,
      matched: [{ kind: 'behash', value: BEHASH }],
      at,
    };
    assert.equal(await store.watches.recordHit(h, 1), true);
  };
  const sync = (now: number) => syncWatchCollection(store, watch, { now: () => now });
  const analyses = async (): Promise<string[]> =>
    (await store.collections.objects(watchCollectionId(watch), { limit: 1000, types: ['malware-analysis'] })).objects.map(
      (o) =>
        (o.object.extensions as Record<string, { behaviour_id: string }>)[Object.keys(o.object.extensions as object)[0]!]!.behaviour_id,
    );

  await hit(0, 1_000);
  const first = await sync(1_000 + 2 * HIT_OVERLAP_MS);
  assert.deepEqual([first.behaviours, first.collection.syncedFrom], [1, 1_001], 'a settled hit: the position goes just past it');
  const again = await sync(1_000 + 3 * HIT_OVERLAP_MS);
  assert.equal(again.behaviours, 0, 'and it is not read again');

  // a hit of a minute ago: the position stays the overlap behind the clock
  const now = 10 * HIT_OVERLAP_MS;
  await hit(1, now - 1_000);
  const recent = await sync(now);
  assert.deepEqual([recent.behaviours, recent.collection.syncedFrom], [1, now - HIT_OVERLAP_MS]);
  // recorded later, with an older time (a worker's clock behind): the next sync still reads it
  await hit(2, now - 30_000);
  const late = await sync(now + 1_000);
  assert.equal(late.behaviours, 2, 'the late hit and the recent one, read again as it is within the overlap');
  assert.deepEqual((await analyses()).sort(), [docs[0]!.id, docs[1]!.id, docs[2]!.id].sort(), 'each behaviour once in the collection');
  // once they are settled: read a last time, the position just past the newest
  const settled = await sync(now + 5 * HIT_OVERLAP_MS);
  assert.deepEqual([settled.behaviours, settled.collection.syncedFrom], [2, now - 999]);
  // nothing recorded since: nothing read, the position up to the overlap behind the clock
  const quiet = await sync(now + 6 * HIT_OVERLAP_MS);
  assert.deepEqual([quiet.behaviours, quiet.collection.syncedFrom], [0, now + 5 * HIT_OVERLAP_MS]);
  assert.equal((await sync(now + 7 * HIT_OVERLAP_MS)).behaviours, 0);
});

test('a saved collection is named as a watch is: a name that is not one is refused before the store is written', async () => {
  const store = openStore(`sqlite:${join(tempDir(), 'names.db')}`);
  cleanup(() => store.close());
  for (const name of ['', '../up', '-x', 'a b', 'x'.repeat(101)]) {
    await assert.rejects(saveExport(store, name, { pivot: { kind: 'behash', value: BEHASH } }), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'USAGE');
      assert.match(err.message, /^bad collection name ".*": 1-100 letters, digits/);
      return true;
    });
    await assert.rejects(store.watches.add({ name, conditions: [{ kind: 'behash', value: BEHASH }], notify: {}, createdAt: 1 }), {
      code: 'USAGE',
      message: new RegExp(`^bad watch name "${name.replace(/[.]/g, '\\.')}"`),
    });
  }
  assert.deepEqual(await store.collections.list(), [], 'nothing saved');
  assert.equal((await saveExport(store, 'x'.repeat(100), { pivot: { kind: 'behash', value: BEHASH } })).collection.name, 'x'.repeat(100));
});
