import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { UpsertGroup } from '../../src/indexing/index.js';
import { openStore, type ItemResult, type Sink, type Store } from '../../src/store/index.js';
import { type SinkDoc } from '../../src/wire/index.js';
import { tempDir } from '../support/env.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';

const dir = tempDir();
let n = 0;
const SHA = (c: string): string => c.repeat(64);

/** A real SQLite sink that also records the size of every call it gets. */
function countingStore(): { store: Store; sink: Sink; calls: number[] } {
  const store = openStore(`sqlite:${join(dir, `g${n++}.db`)}`);
  const calls: number[] = [];
  const sink: Sink = Object.assign(Object.create(store.sink) as Sink, {
    upsert: (docs: readonly SinkDoc[]): Promise<ItemResult[]> => {
      calls.push(docs.length);
      return store.sink.upsert(docs);
    },
  });
  return { store, sink, calls };
}

test('chunks ready together share one sink call, and each gets its own items results, in order', async () => {
  const { store, sink, calls } = countingStore();
  try {
    // an older version of c is stored first: in the group it comes back stale
    await store.sink.upsert(sinkDocs(makeDoc(SHA('c'), 'Zenbox', 2000, { behash: 'B' })));
    const group = new UpsertGroup(sink, 60_000, 3);
    const broken = { meta: { ...sinkDocs(makeDoc(SHA('d'), 'Zenbox', 1000, {}))[0]!.meta, id: '' }, json: '{}' } as SinkDoc;
    const first = sinkDocs([makeDoc(SHA('a'), 'Zenbox', 1000, { behash: 'B' }), makeDoc(SHA('b'), 'Zenbox', 1000, {})]);
    const second = [...sinkDocs(makeDoc(SHA('c'), 'Zenbox', 1000, { behash: 'B' })), broken];
    const third = sinkDocs(makeDoc(SHA('e'), 'CAPE Sandbox', 1000, { behash: 'B' }));
    const results = await Promise.all([group.upsert(first), group.upsert(second), group.upsert(third)]);
    assert.deepEqual(calls, [5], 'the three chunks went to the sink in one call (a full group is written at once)');
    assert.deepEqual(
      results.map((r) => r.map((i) => [i.id, i.status, i.status === 'ok' ? (i.stale ?? false) : i.code])),
      [
        [
          [`${SHA('a')}_Zenbox`, 'ok', false],
          [`${SHA('b')}_Zenbox`, 'ok', false],
        ],
        [
          [`${SHA('c')}_Zenbox`, 'ok', true],
          ['', 'rejected', 'invalid_document'],
        ],
        [[`${SHA('e')}_CAPE Sandbox`, 'ok', false]],
      ],
    );
    assert.deepEqual(await store.sink.query('behash', 'b'), [`${SHA('a')}_Zenbox`, `${SHA('c')}_Zenbox`, `${SHA('e')}_CAPE Sandbox`]);
    assert.equal(await store.sink.count(), 4);
  } finally {
    await store.close();
  }
});

test('a group short of full is written when the wait is over, in one call', async () => {
  const { store, sink, calls } = countingStore();
  try {
    // a wait far longer than the pause below, however busy the machine
    const group = new UpsertGroup(sink, 1500, 4);
    const started = Date.now();
    let early = 0;
    const tick = setInterval(() => early++, 20);
    const first = group.upsert(sinkDocs(makeDoc(SHA('a'), 'Zenbox', 1000, {})));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(calls, [], 'nothing written before the wait is over');
    const second = group.upsert(sinkDocs(makeDoc(SHA('b'), 'Zenbox', 1000, {})));
    const results = await Promise.all([first, second]);
    clearInterval(tick);
    assert.ok(Date.now() - started >= 1490, `written after ${Date.now() - started} ms`);
    assert.ok(early >= 5, 'the event loop ran meanwhile');
    assert.deepEqual(calls, [2]);
    assert.deepEqual(
      results.map((r) => r.map((i) => i.status)),
      [['ok'], ['ok']],
    );
    // the next chunk starts a new group
    await group.upsert(sinkDocs(makeDoc(SHA('c'), 'Zenbox', 1000, {})));
    assert.deepEqual(calls, [2, 1]);
  } finally {
    await store.close();
  }
});

test('a sink call that fails, by rejecting or by throwing, fails every chunk of its group', async () => {
  const boom = new Error('store gone');
  const docs = sinkDocs(makeDoc(SHA('a'), 'Zenbox', 1000, {}));
  for (const upsert of [
    () => Promise.reject(boom),
    () => {
      throw boom;
    },
  ]) {
    const group = new UpsertGroup({ upsert } as unknown as Sink, 10, 3);
    // two of three: written by the timer, where a throw would otherwise escape
    const outcomes = await Promise.allSettled([group.upsert(docs), group.upsert(docs)]);
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'fulfilled')),
      ['store gone', 'store gone'],
    );
  }
});

test('a waiting group is written as soon as `quiet` says nothing else is coming, and a failing check only means the whole wait', async () => {
  const { store, sink, calls } = countingStore();
  try {
    let coming = true;
    let checks = 0;
    const group = new UpsertGroup(
      sink,
      60_000,
      4,
      async () => {
        checks++;
        return !coming;
      },
      10,
    );
    const started = Date.now();
    const first = group.upsert(sinkDocs(makeDoc(SHA('a'), 'Zenbox', 1000, {})));
    // the event itself (three checks said more is coming), not a pause that a busy machine stretches
    for (let i = 0; checks < 3; i++) {
      assert.ok(i < 6000, `only ${checks} check(s) in 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.deepEqual(calls, [], 'held while more is on its way');
    const second = group.upsert(sinkDocs(makeDoc(SHA('b'), 'Zenbox', 1000, {})));
    coming = false;
    await Promise.all([first, second]);
    assert.deepEqual(calls, [2], 'both chunks in one call');
    assert.ok(Date.now() - started < 30_000, `written after ${Date.now() - started} ms, not after the 60 s wait`);
    const asked = checks;
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(checks, asked, 'no checks while nothing waits');

    const failing = new UpsertGroup(sink, 200, 4, () => Promise.reject(new Error('redis away')), 10);
    const t0 = Date.now();
    await failing.upsert(sinkDocs(makeDoc(SHA('c'), 'Zenbox', 1000, {})));
    assert.ok(Date.now() - t0 >= 190, `written by the timer after ${Date.now() - t0} ms`);
    assert.deepEqual(calls, [2, 1]);
  } finally {
    await store.close();
  }
});
