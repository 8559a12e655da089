import assert from 'node:assert/strict';
import { describe, test as vitestTest } from 'vitest';
import type { RetentionDays, Store } from '../../src/store/index.js';
import { entry, letter } from './bookkeepingConformance.js';
import { makeDoc, sinkDocs } from './sinkConformance.js';

/** A store opened with a retention and a clock the test moves. */
export interface RetentionFixture {
  store: Store;
  close(): Promise<void>;
}

export type OpenRetentionStore = (o: { retentionDays: RetentionDays; now: () => number }) => Promise<RetentionFixture>;

const DAY = 86_400;
/** Midnight UTC of 2026-11-01, in seconds: the day partitions of the cases below start here. */
const T0 = 1_793_491_200;
const at = (day: number, hour = 12): number => T0 + day * DAY + hour * 3600;
const SHA = (c: string): string => c.repeat(64);
const BEHASH = (c: string): string => c.repeat(32);

/**
 * The one-live-document and retention contract every backend keeps: a behaviour's newer version
 * in a later partition hides the older one, a stale replay resurrects nothing, counts are of
 * distinct behaviours across partitions, pruning by the behaviour's own date drops what expired
 * (never the newer version of one of its behaviours), and writes already past retention are
 * skipped. Each implementation runs it with its own factory.
 */
export function retentionConformance(name: string, open: OpenRetentionStore, opts: { skip?: string } = {}): void {
  const test = (title: string, fn: () => Promise<void>): void => {
    if (opts.skip) vitestTest.skip(`${title} [skipped: ${opts.skip}]`, fn);
    else vitestTest(title, fn);
  };
  let nowSec = at(20);
  const now = (): number => nowSec * 1000;
  const withStore = async (days: RetentionDays, fn: (s: Store) => Promise<void>): Promise<void> => {
    nowSec = at(20);
    const f = await open({ retentionDays: days, now });
    try {
      await fn(f.store);
    } finally {
      await f.close();
    }
  };

  describe(`retention conformance: ${name}`, () => {
    test('a newer version in a later partition replaces the older one; a stale replay changes nothing', async () => {
      await withStore('off', async (s) => {
        const v1 = makeDoc(SHA('a'), 'Zenbox', at(1), { behash: BEHASH('1') });
        const v2 = makeDoc(SHA('a'), 'Zenbox', at(4), { behash: BEHASH('2') });
        const other = makeDoc(SHA('b'), 'Zenbox', at(1), { behash: BEHASH('1') });
        assert.deepEqual(
          (await s.sink.upsert(sinkDocs([v1, other]))).map((r) => r.status),
          ['ok', 'ok'],
        );
        assert.equal((await s.sink.upsert(sinkDocs(v2)))[0]?.status, 'ok');
        assert.equal(await s.sink.count(), 2, 'one live document per behaviour');
        assert.equal((await s.sink.get(v1.id))?.last_modification_date, at(4));
        assert.deepEqual(await s.sink.query('behash', BEHASH('1')), [other.id], "the older version's pivot no longer names it");
        assert.deepEqual(await s.sink.query('behash', BEHASH('2')), [v1.id]);
        // the old chunk replayed after the newer version's partition exists
        const replay = await s.sink.upsert(sinkDocs(v1));
        assert.deepEqual(replay[0], { id: v1.id, status: 'ok', stale: true });
        assert.equal(await s.sink.count(), 2);
        assert.equal((await s.sink.get(v1.id))?.last_modification_date, at(4));
        assert.deepEqual(await s.sink.query('behash', BEHASH('1')), [other.id]);
        assert.deepEqual(await s.sink.top('behash', 5), [
          { value: BEHASH('1'), count: 1 },
          { value: BEHASH('2'), count: 1 },
        ]);
      });
    });

    test('counts distinct behaviours across partitions, updates included', async () => {
      await withStore('off', async (s) => {
        const docs = [0, 1, 2, 3, 4, 5].map((i) => makeDoc(SHA(String(i)), 'Zenbox', at(i % 3), { behash: BEHASH('c') }));
        await s.sink.upsert(sinkDocs(docs));
        // every other behaviour gets a newer version two days later
        await s.sink.upsert(sinkDocs(docs.filter((_, i) => i % 2 === 0).map((d, i) => makeDoc(d.sha256, 'Zenbox', at(5 + i), {}))));
        assert.equal(await s.sink.count(), 6);
        assert.equal((await s.sink.query('behash', BEHASH('c'))).length, 3, 'the updated ones lost the pivot');
        assert.equal((await s.hunt.pivotStats('behash', BEHASH('c'))).behaviours, 3);
      });
    });

    test('the hunting reads span every partition: pivot statistics, related behaviours, file roll-ups, top since', async () => {
      await withStore('off', async (s) => {
        const H = BEHASH('h');
        const a = makeDoc(SHA('a'), 'Zenbox', at(1), { behash: H });
        const b = makeDoc(SHA('a'), 'CAPE Sandbox', at(5), { behash: H });
        const c = makeDoc(SHA('c'), 'Zenbox', at(9), { behash: H });
        await s.sink.upsert(sinkDocs([a, b, c]));
        // a newer version of the first moves it to a later day, still carrying the value
        await s.sink.upsert(sinkDocs(makeDoc(SHA('a'), 'Zenbox', at(12), { behash: H })));
        const stats = await s.hunt.pivotStats('behash', H);
        assert.deepEqual([stats.behaviours, stats.files], [3, 2]);
        assert.deepEqual(
          stats.newest.map((l) => l.id),
          [a.id, c.id, b.id],
        );
        const related = await s.hunt.related(c.id);
        assert.deepEqual(related?.values, [{ kind: 'behash', value: H, others: 2 }]);
        assert.deepEqual(related?.related.map((r) => r.id).sort(), [a.id, b.id].sort());
        const file = await s.hunt.fileRollup(SHA('a'));
        assert.deepEqual(file?.reports.map((r) => r.sandbox_name).sort(), ['CAPE Sandbox', 'Zenbox']);
        const top = await s.hunt.top('behash', { since: at(8) });
        assert.deepEqual(
          top.map((t) => [t.value, t.behaviours]),
          [[H, 2]],
        );
      });
    });

    test('prune drops what expired by its own date, never the newer version of one of its behaviours', async () => {
      await withStore(5, async (s) => {
        const moved = makeDoc(SHA('a'), 'Zenbox', at(1), { behash: BEHASH('9') });
        const old = makeDoc(SHA('b'), 'Zenbox', at(2), { behash: BEHASH('9') });
        const live = makeDoc(SHA('c'), 'Zenbox', at(18), { behash: BEHASH('9') });
        // retention judges by the clock: write as of day 3, then move it
        nowSec = at(3);
        await s.sink.upsert(sinkDocs([moved, old]));
        nowSec = at(19);
        await s.sink.upsert(sinkDocs([makeDoc(SHA('a'), 'Zenbox', at(16), { behash: BEHASH('8') }), live]));
        nowSec = at(20);
        const cut = { behavioursBefore: nowSec - 5 * DAY };
        assert.equal(await s.retention.oldest(), at(2), 'the oldest live version (the moved one is now of day 16)');
        assert.equal(await s.retention.newest(), at(18));
        const dry = await s.retention.prune({ ...cut, dryRun: true });
        assert.equal(dry.behaviours, 1, 'the moved behaviour is not counted: its live version is newer');
        assert.equal(await s.sink.count(), 3, 'a dry run removes nothing');
        const report = await s.retention.prune(cut);
        assert.equal(report.behaviours, 1);
        assert.equal(report.done, true);
        // the days wholly past the cutoff went, named as the dry run named them
        assert.ok(report.partitions.length > 0, 'the expired days are named');
        assert.deepEqual(dry.partitions, report.partitions);
        assert.equal(await s.sink.count(), 2);
        assert.equal(await s.sink.get(old.id), null);
        assert.equal((await s.sink.get(moved.id))?.last_modification_date, at(16));
        assert.deepEqual(await s.sink.query('behash', BEHASH('9')), [live.id]);
        assert.deepEqual(await s.sink.query('behash', BEHASH('8')), [moved.id]);
        const second = await s.retention.prune(cut);
        assert.equal(second.behaviours, 0, 'a second prune finds nothing');
        assert.deepEqual(second.partitions, [], 'and drops nothing');
        assert.equal(await s.retention.oldest(), at(16));
      });
    });

    test('a write already past retention is skipped; one inside it is stored', async () => {
      await withStore(5, async (s) => {
        const expired = makeDoc(SHA('e'), 'Zenbox', at(10), {});
        const kept = makeDoc(SHA('f'), 'Zenbox', at(16), {});
        const r = await s.sink.upsert(sinkDocs([expired, kept]));
        assert.deepEqual(r[0], { id: expired.id, status: 'ok', stale: true, expired: true });
        assert.equal(r[1]?.status, 'ok');
        assert.equal(await s.sink.get(expired.id), null);
        assert.equal(await s.sink.count(), 1);
      });
    });

    test('prune goes in bounded steps and reports whether more remain', async () => {
      await withStore('off', async (s) => {
        const docs = Array.from({ length: 7 }, (_, i) => makeDoc(String(i).repeat(64), 'Zenbox', at(1 + (i % 2)), {}));
        await s.sink.upsert(sinkDocs(docs));
        const cut = { behavioursBefore: at(10) };
        let removed = 0;
        let steps = 0;
        for (;;) {
          const r = await s.retention.prune({ ...cut, maxRows: 3 });
          assert.ok(r.behaviours <= 3, `a step removed ${r.behaviours} behaviours`);
          removed += r.behaviours;
          steps++;
          if (r.done) break;
          assert.ok(steps < 10, 'prune never reported done');
        }
        assert.equal(removed, 7);
        assert.equal(await s.retention.oldest(), null, 'an empty store has no oldest behaviour');
        assert.equal(await s.retention.newest(), null);
        assert.ok(steps >= 3);
        assert.equal(await s.sink.count(), 0);
      });
    });

    test('bookkeeping goes by when it was written: batch-log rows, dead letters, watch hits, artefact records', async () => {
      await withStore('off', async (s) => {
        const doc = makeDoc(SHA('d'), 'Zenbox', at(1), {});
        await s.sink.upsert(sinkDocs(doc));
        await s.batches.record(entry('202611010000', at(1) * 1000));
        await s.batches.record(entry('202611190000', at(19) * 1000));
        await s.dlq.put([letter({ id: 'dl-1', batch: '202611010000' })]);
        await s.watches.add({ name: 'w1', conditions: [{ kind: 'sha256', value: doc.sha256 }], notify: {}, createdAt: at(1) * 1000 });
        const hit = { watch: 'w1', behaviourId: doc.id, sha256: doc.sha256, sandbox: 'Zenbox', matched: [] };
        await s.watches.recordHit({ ...hit, lastModified: at(1), at: at(1) * 1000 }, at(1) * 1000);
        await s.watches.recordHit({ ...hit, lastModified: at(19), at: at(19) * 1000 }, at(1) * 1000);
        const art = { behaviourId: doc.id, path: '/blobs/x', size: 1, sha256: 'ab'.repeat(32), source: 'feed_link' as const };
        await s.artefacts.record({ ...art, kind: 'pcap', fetchedAt: at(1) * 1000 });
        await s.artefacts.record({ ...art, kind: 'evtx', fetchedAt: at(19) * 1000 });

        const nothing = await s.retention.prune({ bookkeepingBefore: at(0) });
        assert.deepEqual([nothing.batches, nothing.deadLetters, nothing.watchHits, nothing.artefacts], [0, 0, 0, 0]);
        // dead letters carry the time they were written (now, by the real clock): a cutoff in the future takes them
        const cut = { bookkeepingBefore: at(10) };
        const dry = await s.retention.prune({ ...cut, dryRun: true });
        assert.deepEqual([dry.batches, dry.watchHits, dry.artefacts], [1, 1, 1]);
        const r = await s.retention.prune(cut);
        assert.deepEqual([r.batches, r.watchHits, r.artefacts], [1, 1, 1]);
        assert.deepEqual(
          (await s.batches.recent(10)).map((b) => b.batch),
          ['202611190000'],
        );
        assert.deepEqual(
          (await s.watches.hits('w1', {})).map((h) => h.lastModified),
          [at(19)],
        );
        assert.deepEqual(
          (await s.artefacts.list(doc.id)).map((a) => a.kind),
          ['evtx'],
        );
        assert.equal(await s.dlq.count(), 1, 'a dead letter written now is not before day 10 of the test clock');
        // shared collection objects are added now too, by the real clock
        const c = await s.collections.save({
          id: '00000000-0000-4000-8000-0000000000aa',
          name: 'kept-a-day',
          kind: 'export',
          title: 'kept-a-day',
          description: '',
          selection: '[]',
          createdAt: Date.now(),
        });
        const shared = (id: string) => ({ id, type: 'mutex', version: '', versioned: false, object: { type: 'mutex', id, name: id } });
        await s.collections.append(c.id, [shared('mutex--1'), shared('mutex--2')]);
        assert.equal(r.sharedObjects, 0);
        const later = await s.retention.prune({ bookkeepingBefore: Math.floor(Date.now() / 1000) + DAY });
        assert.equal(later.deadLetters, 1);
        assert.equal(later.sharedObjects, 2);
        assert.equal(await s.dlq.count(), 0);
        assert.deepEqual((await s.collections.objects(c.id, { limit: 10 })).objects, []);
        assert.equal(await s.sink.count(), 1, 'bookkeeping retention never touches behaviours');
      });
    });
  });
}
