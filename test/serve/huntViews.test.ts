/**
 * The reads behind the hunting page's landing view and pictures, on both stores: the overview's
 * figures are the store's own (count, dates, freshness as `status` computes it, top values of the
 * window, the new ones among them, watch hits, dead-letter codes), a timeline sums to the value's
 * behaviours, the charting library is served from the package, and misuse is a 400.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'vitest';
import { createLogger } from '../../src/log/index.js';
import { startReadApi } from '../../src/serve/index.js';
import { ingestFreshness, openStore, type Store } from '../../src/store/index.js';
import { sinkDocOf } from '../../src/wire/index.js';
import { entry, letter } from '../store/bookkeepingConformance.js';
import { H1, T0, corpus } from '../store/huntCorpus.js';
import { openRealStore, realCluster } from '../support/realElasticsearch.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';

const es = await realCluster();

interface Overview {
  window: { seconds: number; since: number };
  store: { behaviours: number; oldestModified: number | null; newestModified: number | null };
  freshness: { doneThrough: string | null; lagSeconds: number | null; failed: string[]; missing: string[] };
  kinds: { kind: string; new: { value: string; behaviours: number; firstSeen: number }[]; grew: { value: string; behaviours: number }[] }[];
  watchHits: { watch: string; behaviourId: string }[];
  deadLetters: { total: number; lastDay: { code: string; count: number }[] };
}

function views(name: string, skip: string | undefined, open: () => Promise<{ store: Store; close: () => Promise<void> }>): void {
  describe.skipIf(skip)(`hunting page reads: ${name}${skip ? ` [skipped: ${skip}]` : ''}`, () => {
    test('overview, timeline and co-occurring values answer what the store holds; the chart library is the package’s; misuse is 400', async () => {
      const { store, close } = await open();
      cleanup(close);
      const docs = corpus();
      assert.ok((await store.sink.upsert(docs.map((d) => sinkDocOf(d)))).every((r) => r.status === 'ok'));
      const now = Date.now();
      await store.batches.record(entry('202611080000', now - 1000));
      await store.batches.record(entry('202611080001', now - 900, { status: 'missing', lines: 0, accepted: 0, rejected: 0 }));
      await store.batches.record(entry('202611080002', now - 800));
      await store.dlq.put([letter({ id: 'normalize:202611080000:1', batch: '202611080000' })]);
      await store.watches.add({ name: 'h1', conditions: [{ kind: 'behash', value: H1 }], notify: {}, createdAt: 1 });
      const d0 = docs[0]!;
      const hit = { watch: 'h1', behaviourId: d0.id, lastModified: d0.last_modification_date, sha256: d0.sha256, sandbox: d0.sandbox_name };
      assert.ok(await store.watches.recordHit({ ...hit, matched: [{ kind: 'behash', value: H1 }], at: now }, 1));

      const dir = tempDir();
      const config = await testConfig(dir, { serve: { port: 0 } });
      const api = await startReadApi({ config, store, log: createLogger('silent') });
      cleanup(() => api.close());
      const get = (path: string) => fetch(`${api.url}/api/v3/sandtrail/${path}`);

      // a window reaching back to the corpus's analyses (T0, in 2027)
      const seconds = 90 * 86_400;
      const r = await get(`overview?window=${seconds}`);
      assert.equal(r.status, 200);
      const o = ((await r.json()) as { data: { attributes: Overview } }).data.attributes;
      assert.equal(o.store.behaviours, await store.sink.count());
      assert.deepEqual([o.store.oldestModified, o.store.newestModified], [await store.retention.oldest(), await store.retention.newest()]);
      const fresh = await ingestFreshness(store.batches);
      assert.deepEqual(
        [o.freshness.doneThrough, o.freshness.missing, o.freshness.failed],
        [fresh.doneThrough, ['202611080001'], []],
        'as status computes it',
      );
      const behash = o.kinds.find((k) => k.kind === 'behash');
      const since = o.window.since;
      const top = await store.hunt.top('behash', { since, limit: 10 });
      assert.deepEqual(
        behash?.grew.map((v) => [v.value, v.behaviours]),
        top.map((v) => [v.value, v.behaviours]),
      );
      // new: first seen in the window over the whole store; the corpus's analyses (T0, in 2027) all are
      assert.ok(since < T0);
      assert.deepEqual(
        behash?.new.map((v) => v.value),
        top.map((v) => v.value),
      );
      for (const v of behash?.new ?? []) assert.ok(v.firstSeen >= since);
      assert.deepEqual(
        o.watchHits.map((h) => [h.watch, h.behaviourId]),
        [['h1', d0.id]],
      );
      assert.deepEqual(o.deadLetters, { total: 1, lastDay: [{ code: 'not_json', count: 1 }] });

      const t = await get(`timeline/behash?value=${H1.toUpperCase()}`);
      const tl = (
        (await t.json()) as {
          data: { attributes: { behaviours: number; bucketSeconds: number; counts: { count: number }[]; undated: number } };
        }
      ).data.attributes;
      assert.equal(tl.bucketSeconds, 3600, 'a value seen over minutes is drawn per hour');
      assert.equal(tl.counts.reduce((n, c) => n + c.count, 0) + tl.undated, tl.behaviours);
      assert.equal(tl.behaviours, (await store.hunt.pivotStats('behash', H1)).behaviours);
      const byDay = (
        (await (await get(`timeline/behash?value=${H1}&bucket=day`)).json()) as { data: { attributes: { bucketSeconds: number } } }
      ).data.attributes;
      assert.equal(byDay.bucketSeconds, 86_400);

      const co = ((await (await get(`cooccurring/behash?value=${H1}&limit=3`)).json()) as { data: { attributes: { values: unknown[] } } })
        .data.attributes.values;
      assert.deepEqual(co, await store.hunt.cooccurring('behash', H1, 3));
      for (const [path, status] of [
        ['cooccurring/behash', 400],
        ['cooccurring/behash?value=x&limit=0', 400],
        ['overview?window=59', 400],
        ['overview?window=9999999999', 400],
        ['overview?window=1h', 400],
        ['timeline/behash', 400],
        ['timeline/nope?value=x', 400],
        ['timeline/behash?value=x&bucket=week', 400],
      ] as const) {
        assert.equal((await get(path)).status, status, path);
      }
      const js = await fetch(`${api.url}/assets/uplot.js`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
      assert.match(await js.text(), /uPlot/);
      assert.equal((await fetch(`${api.url}/assets/uplot.css`)).status, 200);
      assert.equal((await fetch(`${api.url}/assets/other.js`)).status, 404);
    });
  });
}

views('sqlite', undefined, async () => {
  const store = openStore(`sqlite:${join(tempDir(), 'views.db')}`);
  return { store, close: () => store.close() };
});
views('elasticsearch (real cluster)', 'skip' in es ? es.skip : undefined, async () => {
  const real = openRealStore(es as Exclude<typeof es, { skip: string }>);
  return { store: real.store, close: real.close };
});
