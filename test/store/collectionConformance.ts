import assert from 'node:assert/strict';
import { describe, test as vitestTest } from 'vitest';
import { errorCode } from '../../src/errors/index.js';
import type { CollectionObject, CollectionObjectInput, CollectionStore, SharedCollectionInput } from '../../src/store/index.js';

export interface CollectionStoreFixture {
  collections: CollectionStore;
  /** A second handle on the same store, as another process would have. */
  other(): Promise<{ collections: CollectionStore; close(): Promise<void> }>;
  close(): Promise<void>;
}

const T0 = '2026-11-01T00:00:00.000Z';

function collection(name: string, o: Partial<SharedCollectionInput> = {}): SharedCollectionInput {
  const n = [...name].reduce((a, c) => a + c.charCodeAt(0), 0) % 4096;
  return {
    id: `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`,
    name,
    kind: 'export',
    title: name,
    description: `collection ${name}`,
    selection: JSON.stringify(['behash', name]),
    createdAt: 1_796_000_000_000,
    ...o,
  };
}

/** A shared object (held in its first version only). */
function shared(id: string, version = T0, extra: Record<string, unknown> = {}): CollectionObjectInput {
  const [type = 'x'] = id.split('--');
  return { id, type, version, versioned: false, object: { type, id, spec_version: '2.1', modified: version, ...extra } };
}

/** A report's own object: each version kept. */
function analysis(n: number, version: string): CollectionObjectInput {
  const id = `malware-analysis--00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return { id, type: 'malware-analysis', version, versioned: true, object: { type: 'malware-analysis', id, modified: version } };
}

/** Every visible object of a collection, paged as a client pages (the last date of a page is the next one's start). */
async function all(c: CollectionStore, id: string, limit = 7, version?: { all: true }): Promise<CollectionObject[]> {
  const out: CollectionObject[] = [];
  let after = 0;
  for (;;) {
    const p = await c.objects(id, { addedAfter: after, limit, ...(version ? { version } : {}) });
    out.push(...p.objects);
    const last = p.objects[p.objects.length - 1];
    if (!p.more || !last) return out;
    after = last.dateAdded;
  }
}

/**
 * The CollectionStore contract, run against every backend: objects held once (by id, or by id and
 * version for a report's own), dates unique and increasing across appends and processes, paging
 * by date that gives every object once, the TAXII filters.
 */
export function collectionConformance(name: string, make: () => Promise<CollectionStoreFixture>, opts: { skip?: string } = {}): void {
  const test = (title: string, fn: () => Promise<void>) => vitestTest.skipIf(opts.skip !== undefined)(title, fn, 240_000);
  describe(`CollectionStore conformance: ${name}${opts.skip ? ` [skipped: ${opts.skip}]` : ''}`, () => {
    test('save creates, saves again update the text and keep the objects; list, get, remove', async () => {
      const f = await make();
      try {
        assert.equal(await f.collections.get(collection('a').id), null);
        const a = await f.collections.save(collection('a'));
        assert.equal(a.addedThrough, 0);
        await f.collections.append(a.id, [shared('domain-name--1')]);
        const again = await f.collections.save(collection('a', { description: 'changed', createdAt: 1 }));
        assert.equal(again.description, 'changed');
        assert.equal(again.createdAt, a.createdAt, 'the first save keeps its time');
        assert.ok(again.addedThrough > 0);
        await f.collections.save(collection('b', { kind: 'watch' }));
        assert.deepEqual(
          (await f.collections.list()).map((c) => [c.name, c.kind]),
          [
            ['a', 'export'],
            ['b', 'watch'],
          ],
        );
        assert.equal((await all(f.collections, a.id)).length, 1);
        assert.equal(await f.collections.remove(a.id), true);
        assert.equal(await f.collections.remove(a.id), false);
        assert.equal(await f.collections.get(a.id), null);
        assert.equal((await f.collections.objects(a.id, { limit: 10 })).objects.length, 0);
        assert.equal(errorCode(await f.collections.append(a.id, [shared('x--1')]).catch((e: unknown) => e)), 'NOT_FOUND');
      } finally {
        await f.close();
      }
    });

    test('an object is held once; a report gets a version per modified; dates increase; match[version]', async () => {
      const f = await make();
      try {
        const c = await f.collections.save(collection('v'));
        const first = await f.collections.append(c.id, [
          shared('domain-name--1'),
          shared('domain-name--1'),
          analysis(1, '2026-11-01T00:00:00.000Z'),
          shared('indicator--1'),
        ]);
        assert.equal(first.added, 3, 'the same object twice in one append is added once');
        const second = await f.collections.append(c.id, [
          // shared again from another report, with that report's times: not a new version
          shared('domain-name--1', '2026-11-02T00:00:00.000Z'),
          analysis(1, '2026-11-01T00:00:00.000Z'),
          analysis(1, '2026-11-03T00:00:00.000Z'),
          shared('url--1'),
        ]);
        assert.equal(second.added, 2);
        const every = await all(f.collections, c.id, 2, { all: true });
        assert.deepEqual(
          every.map((o) => `${o.id}@${o.version}`),
          [
            `domain-name--1@${T0}`,
            'malware-analysis--00000000-0000-4000-8000-000000000001@2026-11-01T00:00:00.000Z',
            `indicator--1@${T0}`,
            'malware-analysis--00000000-0000-4000-8000-000000000001@2026-11-03T00:00:00.000Z',
            `url--1@${T0}`,
          ],
        );
        const dates = every.map((o) => o.dateAdded);
        assert.deepEqual(
          dates,
          [...dates].sort((x, y) => x - y),
        );
        assert.equal(new Set(dates).size, dates.length, 'dates are unique within a collection');
        const last = await all(f.collections, c.id);
        assert.deepEqual(
          last.filter((o) => o.type === 'malware-analysis').map((o) => o.version),
          ['2026-11-03T00:00:00.000Z'],
          'the default is the last version',
        );
        const firstOnly = await f.collections.objects(c.id, { limit: 10, version: { first: true }, types: ['malware-analysis'] });
        assert.deepEqual(
          firstOnly.objects.map((o) => o.version),
          ['2026-11-01T00:00:00.000Z'],
        );
        const named = await f.collections.objects(c.id, { limit: 10, version: { versions: ['2026-11-03T00:00:00.000Z'] } });
        assert.deepEqual(
          named.objects.map((o) => o.id),
          ['malware-analysis--00000000-0000-4000-8000-000000000001'],
        );
        const byId = await f.collections.objects(c.id, { limit: 10, ids: ['url--1', 'domain-name--1'] });
        assert.deepEqual(byId.objects.map((o) => o.id).sort(), ['domain-name--1', 'url--1']);
        assert.deepEqual(byId.objects[0]?.object.type, byId.objects[0]?.type, 'the object comes back whole');
      } finally {
        await f.close();
      }
    });

    test('paging by date gives every object once; a page stops at its limit and its bytes; nothing new after the last', async () => {
      const f = await make();
      try {
        const c = await f.collections.save(collection('p'));
        const n = 1234;
        for (let i = 0; i < n; i += 500) {
          const chunk = Array.from({ length: Math.min(500, n - i) }, (_, k) => shared(`file--${i + k}`, T0, { name: `f${i + k}` }));
          await f.collections.append(c.id, chunk);
        }
        const got = await all(f.collections, c.id, 100);
        assert.equal(got.length, n);
        assert.equal(new Set(got.map((o) => o.id)).size, n);
        const lastDate = got[got.length - 1]?.dateAdded ?? 0;
        assert.deepEqual(await f.collections.objects(c.id, { addedAfter: lastDate, limit: 100 }), { objects: [], more: false });
        const big = 'z'.repeat(4000);
        await f.collections.append(c.id, [shared('note--1', T0, { big }), shared('note--2', T0, { big }), shared('note--3', T0, { big })]);
        const byBytes = await f.collections.objects(c.id, { addedAfter: lastDate, limit: 100, maxBytes: 9000 });
        assert.equal(byBytes.objects.length, 2);
        assert.equal(byBytes.more, true);
        const one = await f.collections.objects(c.id, { addedAfter: lastDate, limit: 100, maxBytes: 10 });
        assert.equal(one.objects.length, 1, 'a page holds one object whatever its size');
      } finally {
        await f.close();
      }
    });

    test('appends from two processes at once: every object once, and no date a reader passed is given later', async () => {
      const f = await make();
      const g = await f.other();
      try {
        const c = await f.collections.save(collection('race'));
        const seen: CollectionObject[] = [];
        let after = 0;
        // one poller: its polls one after the other, as a client's are
        let polling = Promise.resolve();
        const read = (): Promise<void> => (polling = polling.then(poll));
        const poll = async (): Promise<void> => {
          for (;;) {
            const p = await f.collections.objects(c.id, { addedAfter: after, limit: 50 });
            seen.push(...p.objects);
            const last = p.objects[p.objects.length - 1];
            if (last) after = last.dateAdded;
            if (!p.more) return;
          }
        };
        const writer = async (store: CollectionStore, from: number): Promise<void> => {
          for (let i = 0; i < 6; i++) {
            const objects = Array.from({ length: 40 }, (_, k) => shared(`file--${(from + i * 40 + k) % 300}`));
            await store.append(c.id, objects);
            await read();
          }
        };
        await Promise.all([writer(f.collections, 0), writer(g.collections, 100)]);
        await read();
        const ids = seen.map((o) => o.id);
        assert.equal(new Set(ids).size, ids.length, 'a poller got no object twice');
        assert.equal(ids.length, (await all(f.collections, c.id, 1000)).length, 'and missed none');
      } finally {
        await g.close();
        await f.close();
      }
    });
  });
}
