import assert from 'node:assert/strict';
import { describe, test as vitestTest } from 'vitest';
import { replayDeadLetters } from '../../src/dlq/index.js';
import { type Sink, type DeadLetterInput, type DeadLetterStore, type BatchLog, type BatchLogEntry } from '../../src/store/index.js';
import { makeDoc } from './sinkConformance.js';

export interface BookkeepingFixture {
  sink: Sink;
  dlq: DeadLetterStore;
  batches: BatchLog;
  close(): Promise<void>;
}

/** A dead letter of the normalize stage, with what `over` sets. */
export const letter = (over: Partial<DeadLetterInput> & Pick<DeadLetterInput, 'id' | 'batch'>): DeadLetterInput => ({
  stage: 'normalize',
  line: 1,
  docId: null,
  code: 'not_json',
  path: '$',
  message: 'bad',
  raw: '{nope',
  rawEncoding: 'utf8',
  rawSize: 5,
  rawSha256: 'ab'.repeat(32),
  rawTruncated: false,
  ...over,
});

/** An `ok` batch-log row finished at `finishedAt` (epoch ms), with what `over` sets. */
export const entry = (batch: string, finishedAt: number, over: Partial<BatchLogEntry> = {}): BatchLogEntry => ({
  batch,
  source: 'dir:/feed',
  status: 'ok',
  lines: 10,
  accepted: 9,
  rejected: 1,
  chunks: 1,
  bytesDecoded: 1234,
  error: null,
  startedAt: finishedAt - 500,
  finishedAt,
  ...over,
});

/**
 * The dead-letter store and batch log contract every backend keeps: idempotent puts, the same
 * listing order and filters, counts, removal, paging iteration, replay, and overwritten batches.
 */
export function bookkeepingConformance(name: string, open: () => Promise<BookkeepingFixture>, opts: { skip?: string } = {}): void {
  const test = (title: string, fn: () => Promise<void>): void => {
    // a skipped case names its reason, so a missing cluster is visible in the summary
    if (opts.skip) vitestTest.skip(`${title} [skipped: ${opts.skip}]`, fn);
    else vitestTest(title, fn);
  };
  describe(`dead letters and batch log: ${name}`, () => {
    test('put is idempotent by id (last write wins), list orders by batch, stage, line and filters', async () => {
      const f = await open();
      try {
        const entries = [
          letter({ id: 'normalize:202611010001:3', batch: '202611010001', line: 3 }),
          letter({
            id: 'normalize:202611010000:7',
            batch: '202611010000',
            line: 7,
            rawEncoding: 'base64',
            raw: 'AAE=',
            rawTruncated: true,
            rawSize: 9e6,
          }),
          letter({
            id: 'index:202611010000:x_Zenbox',
            batch: '202611010000',
            stage: 'index',
            line: null,
            docId: 'x_Zenbox',
            code: 'mapper_parsing_exception',
          }),
          letter({ id: 'normalize:202611010000:2', batch: '202611010000', line: 2 }),
        ];
        await f.dlq.put(entries);
        await f.dlq.put([{ ...entries[0]!, message: 'bad again' }]);
        assert.equal(await f.dlq.count(), 4);
        const all = await f.dlq.list();
        assert.deepEqual(
          all.map((e) => e.id),
          ['index:202611010000:x_Zenbox', 'normalize:202611010000:2', 'normalize:202611010000:7', 'normalize:202611010001:3'],
        );
        assert.ok(all.every((e) => !('raw' in e) && e.createdAt > 0 && e.updatedAt >= e.createdAt));
        const first = await f.dlq.get('normalize:202611010001:3');
        assert.equal(first?.message, 'bad again');
        const big = await f.dlq.get('normalize:202611010000:7');
        const { createdAt: _c, updatedAt: _u, ...rest } = big!;
        assert.deepEqual(rest, entries[1]);
        assert.equal(await f.dlq.get('normalize:nope:1'), null);

        assert.deepEqual(
          (await f.dlq.list({ stage: 'normalize', batch: '202611010000' })).map((e) => e.line),
          [2, 7],
        );
        assert.deepEqual(
          (await f.dlq.list({ limit: 2, offset: 1 })).map((e) => e.id),
          ['normalize:202611010000:2', 'normalize:202611010000:7'],
        );
        assert.equal(await f.dlq.count({ stage: 'index' }), 1);
        assert.equal(await f.dlq.count({ batches: ['202611010001', '202611019999'] }), 1);
        assert.equal(await f.dlq.count({ batches: [] }), 0);
        // codes of the entries written since a time: most first, ties by code; none from the future
        const startedAt = Math.min(...all.map((e) => e.createdAt));
        assert.deepEqual(await f.dlq.codes(startedAt), [
          { code: 'not_json', count: 3 },
          { code: 'mapper_parsing_exception', count: 1 },
        ]);
        assert.deepEqual(await f.dlq.codes(Date.now() + 60_000), []);

        const seen: string[] = [];
        for await (const e of f.dlq.iterate(2)) seen.push(e.id);
        assert.deepEqual(seen, [...entries.map((e) => e.id)].sort());

        assert.equal(await f.dlq.remove(['normalize:202611010000:2', 'normalize:nope:1']), 1);
        assert.equal(await f.dlq.count(), 3);
        assert.equal(await f.dlq.purge(), 3);
        assert.equal(await f.dlq.count(), 0);
      } finally {
        await f.close();
      }
    });

    test('replay indexes what now passes and keeps what does not', async () => {
      const f = await open();
      try {
        const good = JSON.stringify({ id: `${'c'.repeat(64)}_Zenbox`, attributes: { behash: 'h1', last_modification_date: 9 } });
        const doc = makeDoc('d'.repeat(64), 'CAPE Sandbox', 50, { behash: 'h2' });
        await f.dlq.put([
          letter({ id: 'normalize:202611010000:1', batch: '202611010000', raw: good, rawSize: good.length }),
          letter({ id: 'normalize:202611010000:2', batch: '202611010000', line: 2 }),
          letter({
            id: `index:202611010000:${doc.id}`,
            batch: '202611010000',
            stage: 'index',
            line: null,
            docId: doc.id,
            code: 'es_rejected_execution_exception',
            raw: JSON.stringify(doc),
            rawSize: 1,
          }),
        ]);
        const r = await replayDeadLetters(f.dlq, f.sink, { all: true });
        assert.deepEqual(
          { replayed: r.replayed, stillRejected: r.stillRejected, retryable: r.retryable },
          { replayed: 2, stillRejected: 1, retryable: 0 },
        );
        assert.deepEqual(await f.sink.get(doc.id), doc);
        assert.deepEqual(
          (await f.dlq.list()).map((e) => e.id),
          ['normalize:202611010000:2'],
        );
      } finally {
        await f.close();
      }
    });

    test('batch log: record overwrites by minute; get sorts by minute; recent is newest first', async () => {
      const f = await open();
      try {
        await f.batches.chunkStored('202611010000', 0);
        await f.batches.record(entry('202611010000', 1000));
        await f.batches.record(
          entry('202611010002', 3000, { status: 'missing', lines: 0, accepted: 0, rejected: 0, chunks: 0, bytesDecoded: 0 }),
        );
        await f.batches.record(entry('202611010001', 2000, { status: 'failed', error: 'decoder exited 2' }));
        await f.batches.record(entry('202611010000', 4000, { accepted: 10, rejected: 0 }));
        assert.deepEqual(await f.batches.get(['202611010002', '202611010000', '202611019999']), [
          entry('202611010000', 4000, { accepted: 10, rejected: 0 }),
          entry('202611010002', 3000, { status: 'missing', lines: 0, accepted: 0, rejected: 0, chunks: 0, bytesDecoded: 0 }),
        ]);
        assert.deepEqual(
          (await f.batches.recent(2)).map((b) => b.batch),
          ['202611010000', '202611010002'],
        );
        assert.deepEqual(await f.batches.get([]), []);
      } finally {
        await f.close();
      }
    });

    test('batch log: minutes() is the newest feed minutes by id, whenever they finished, lookups and chunk marks aside', async () => {
      const f = await open();
      try {
        // live minutes first, then a backfill of older ones and a run of lookups, finished later
        await f.batches.record(entry('202611021200', 1000, { chunks: 0 }));
        await f.batches.record(
          entry('202611021201', 2000, { status: 'missing', lines: 0, accepted: 0, rejected: 0, chunks: 0, bytesDecoded: 0 }),
        );
        await f.batches.record(entry('202611021202', 3000, { chunks: 2 }));
        await f.batches.chunkStored('202611021202', 0);
        for (let m = 0; m < 3; m++) await f.batches.record(entry(`20261101000${m}`, 10_000 + m, { chunks: 0 }));
        for (const h of ['aa', 'bb', 'cc']) await f.batches.record(entry(`lookup-${h.repeat(32)}`, 20_000, { source: 'api' }));
        assert.deepEqual(
          (await f.batches.recent(3)).map((b) => b.batch),
          ['lookup-' + 'cc'.repeat(32), 'lookup-' + 'bb'.repeat(32), 'lookup-' + 'aa'.repeat(32)],
        );
        assert.deepEqual(
          (await f.batches.minutes(4)).map((b) => [b.batch, b.status]),
          [
            ['202611021202', 'pending'],
            ['202611021201', 'missing'],
            ['202611021200', 'ok'],
            ['202611010002', 'ok'],
          ],
        );
        assert.equal((await f.batches.minutes(100)).length, 6);
        assert.deepEqual(await f.batches.minutes(0), []);
      } finally {
        await f.close();
      }
    });

    test('batch log: ok only once every chunk is stored, whichever comes first; marks are idempotent', async () => {
      const f = await open();
      try {
        const b = '202611010100';
        // chunk 1 stored before the feed stage recorded the batch (index jobs start before it ends)
        await f.batches.chunkStored(b, 1);
        await f.batches.record(entry(b, 1000, { chunks: 3 }));
        assert.equal((await f.batches.get([b]))[0]?.status, 'pending');
        assert.equal((await f.batches.recent(5)).find((e) => e.batch === b)?.status, 'pending');
        await f.batches.chunkStored(b, 0);
        await f.batches.chunkStored(b, 0);
        assert.deepEqual(await f.batches.storedChunks(b, 3), [0, 1]);
        assert.equal((await f.batches.get([b]))[0]?.status, 'pending');
        await f.batches.chunkStored(b, 2);
        assert.equal((await f.batches.get([b]))[0]?.status, 'ok');
        assert.deepEqual(
          (await f.batches.recent(5)).map((e) => [e.batch, e.status]),
          [[b, 'ok']],
          'chunk marks never show up as batches',
        );
        // a re-run records the batch again: the marks still stand for the same chunks
        await f.batches.record(entry(b, 2000, { chunks: 3 }));
        assert.equal((await f.batches.get([b]))[0]?.status, 'ok');
        // a mark beyond the recorded chunks does not count
        const c = '202611010101';
        await f.batches.chunkStored(c, 5);
        await f.batches.record(entry(c, 1000, { chunks: 1 }));
        assert.equal((await f.batches.get([c]))[0]?.status, 'pending');
        assert.deepEqual(await f.batches.storedChunks(c, 1), []);
      } finally {
        await f.close();
      }
    });

    test('batch log: the chunks of one batch marked all at once (index workers side by side): none fails, the batch ends ok', async () => {
      const f = await open();
      try {
        const b = '202611010200';
        const chunks = 24;
        await f.batches.record(entry(b, 1000, { chunks }));
        // every mark settles the entry; the last ones race to write ok (a real cluster's update
        // then meets a version conflict on the entry, which must be retried, not thrown)
        const marked = await Promise.allSettled(Array.from({ length: chunks }, (_, n) => f.batches.chunkStored(b, n)));
        assert.deepEqual(
          marked.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
          [],
        );
        assert.equal((await f.batches.get([b]))[0]?.status, 'ok');
      } finally {
        await f.close();
      }
    });
  });
}
