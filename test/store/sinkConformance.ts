import assert from 'node:assert/strict';
import { describe, test as vitestTest } from 'vitest';
import { sinkDocOf, type SinkDoc } from '../../src/wire/index.js';
import { normalizeRecord, type BehaviourDoc } from '../../src/normalize/index.js';
import type { Sink } from '../../src/store/index.js';

export interface SinkFixture {
  sink: Sink;
  close(): Promise<void>;
}

const SHA = (c: string): string => c.repeat(64);

/** A behaviour document built by the real normalizer from a raw feed record. */
export function makeDoc(sha: string, sandbox: string, lmd: number, attrs: Record<string, unknown>): BehaviourDoc {
  const r = normalizeRecord({
    type: 'file_behaviour',
    id: `${sha}_${sandbox}`,
    attributes: { sandbox_name: sandbox, analysis_date: lmd - 5, last_modification_date: lmd, ...attrs },
  });
  assert.ok(r.ok, JSON.stringify(!r.ok && r.rejection));
  return r.doc;
}

/** Documents as the index stage hands them to a store: meta and JSON text. */
export function sinkDocs(docs: BehaviourDoc | readonly BehaviourDoc[]): SinkDoc[] {
  return (Array.isArray(docs) ? docs : [docs]).map((d: BehaviourDoc) => sinkDocOf(d));
}

const JA3_A = 'A'.repeat(32);
const DROP = 'D'.repeat(64);

function corpus(): BehaviourDoc[] {
  return [
    makeDoc(SHA('a'), 'Zenbox', 1000, { behash: 'B1', ja3_digests: [JA3_A], sigma_analysis_results: [{ rule_id: 'Sig-1' }] }),
    makeDoc(SHA('b'), 'CAPE Sandbox', 1000, {
      behash: 'b1',
      tls: [{ ja3: JA3_A, ja3s: 'c'.repeat(32) }],
      files_dropped: [{ path: 'x.exe', sha256: DROP }],
    }),
    makeDoc(SHA('c'), 'Zenbox', 1000, { behash: 'b2', sigma_analysis_results: [{ rule_id: 'sig-1' }, { rule_id: 'sig-2' }] }),
  ];
}

/**
 * One behaviour contract for every sink: upsert, newer-wins, pivot queries, per-item failure
 * classification, idempotent replay. Each implementation runs it with its own fixture factory.
 */
export function sinkConformance(name: string, open: () => Promise<SinkFixture>, opts: { skip?: string } = {}): void {
  // a skipped implementation still lists every case, each with the reason, so a skip is never silent
  const test = (title: string, fn: () => Promise<void>): void => {
    // a skipped case names its reason, so a missing cluster is visible in the summary
    if (opts.skip) vitestTest.skip(`${title} [skipped: ${opts.skip}]`, fn);
    else vitestTest(title, fn);
  };
  describe(`sink conformance: ${name}`, () => {
    test('upsert stores documents retrievable by id', async () => {
      const f = await open();
      try {
        const docs = corpus();
        const res = await f.sink.upsert(sinkDocs(docs));
        assert.deepEqual(
          res.map((r) => r.status),
          ['ok', 'ok', 'ok'],
        );
        assert.equal(await f.sink.count(), 3);
        assert.deepEqual(await f.sink.get(docs[1]!.id), docs[1]);
        assert.equal(await f.sink.get(`${SHA('f')}_Nothing`), null);
      } finally {
        await f.close();
      }
    });

    test('pivot queries return sorted ids and match hashes case-insensitively', async () => {
      const f = await open();
      try {
        const [a, b, c] = corpus();
        await f.sink.upsert(sinkDocs([c!, a!, b!]));
        assert.deepEqual(await f.sink.query('behash', 'b1'), [a!.id, b!.id].sort());
        assert.deepEqual(await f.sink.query('ja3', JA3_A.toLowerCase()), [a!.id, b!.id].sort());
        assert.deepEqual(await f.sink.query('ja3', JA3_A), [a!.id, b!.id].sort());
        assert.deepEqual(await f.sink.query('ja3s', 'C'.repeat(32)), [b!.id]);
        assert.deepEqual(await f.sink.query('dropped_sha256', DROP.toLowerCase()), [b!.id]);
        assert.deepEqual(await f.sink.query('sigma_rule_id', 'SIG-1'), [a!.id, c!.id].sort());
        assert.deepEqual(await f.sink.query('sigma_rule_id', 'sig-2'), [c!.id]);
        assert.deepEqual(await f.sink.query('sha256', SHA('A')), [a!.id]);
        assert.deepEqual(await f.sink.query('behash', 'nope'), []);
        assert.deepEqual((await f.sink.top('behash', 1))[0], { value: 'b1', count: 2 });
      } finally {
        await f.close();
      }
    });

    test('scan pages through a selection: each document once, its newest version, every page within its limit', async () => {
      const f = await open();
      try {
        const DAY = 86_400;
        const docs = [0, 1, 2, 3, 4, 5].map((i) =>
          makeDoc(SHA(String(i + 1)), 'Zenbox', 1000 + (i % 3) * DAY, { behash: i < 5 ? 'Scan-H' : 'other' }),
        );
        // a newer version of the first, on a later day
        const newer = makeDoc(SHA('1'), 'Zenbox', 1000 + 3 * DAY, { behash: 'scan-h', verdicts: ['MALWARE'] });
        await f.sink.upsert(sinkDocs(docs));
        await f.sink.upsert(sinkDocs([newer]));
        const all = async (q: Parameters<Sink['scan']>[0], limit: number): Promise<BehaviourDoc[]> => {
          const out: BehaviourDoc[] = [];
          let cursor: string | undefined;
          for (let pages = 1; ; pages++) {
            const page = await f.sink.scan(q, cursor, limit);
            assert.ok(page.docs.length <= limit);
            out.push(...page.docs);
            cursor = page.next;
            if (cursor === undefined) break;
            assert.ok(pages < 50, 'the cursor moves on');
          }
          return out;
        };
        const ids = (l: BehaviourDoc[]): string[] => l.map((d) => d.id).sort();
        const byHash = await all({ pivot: { kind: 'behash', value: 'SCAN-H' } }, 2);
        assert.deepEqual(ids(byHash), ids(docs.slice(0, 5)));
        assert.deepEqual(
          byHash.find((d) => d.id === newer.id),
          newer,
        );
        assert.deepEqual(ids(await all({}, 3)), ids(docs));
        // analysed on day 1 only (analysis_date is lmd - 5)
        assert.deepEqual(ids(await all({ since: DAY, until: 2 * DAY }, 1)), ids([docs[1]!, docs[4]!]));
        assert.deepEqual(ids(await all({ pivot: { kind: 'behash', value: 'scan-h' }, since: 3 * DAY }, 5)), [newer.id]);
        assert.deepEqual(ids(await all({ pivot: { kind: 'sha256', value: SHA('2').toUpperCase() } }, 10)), [docs[1]!.id]);
        assert.deepEqual(await f.sink.scan({ pivot: { kind: 'ja3', value: 'nope' } }, undefined, 10), { docs: [] });
      } finally {
        await f.close();
      }
    });

    test('newer last_modification_date wins whatever the arrival order, and pivots follow it', async () => {
      const f = await open();
      try {
        const old = makeDoc(SHA('e'), 'Zenbox', 1000, { behash: 'old-hash' });
        const newer = makeDoc(SHA('e'), 'Zenbox', 2000, { behash: 'new-hash' });
        assert.equal((await f.sink.upsert(sinkDocs([newer])))[0]?.status, 'ok');
        const stale = (await f.sink.upsert(sinkDocs([old])))[0];
        assert.equal(stale?.status, 'ok');
        assert.equal(stale?.status === 'ok' && stale.stale, true);
        assert.deepEqual(await f.sink.get(newer.id), newer);
        assert.deepEqual(await f.sink.query('behash', 'old-hash'), []);

        // every kind of the replaced version goes, in a later call, and what both carry stays once
        const f2 = makeDoc(SHA('9'), 'Zenbox', 1000, {
          behash: 'first',
          sigma_analysis_results: [{ rule_id: 'Sig-Old' }, { rule_id: 'Sig-Both' }],
          tls: [{ ja3: JA3_A, ja3s: 'c'.repeat(32) }],
          files_dropped: [{ path: 'x.exe', sha256: DROP }],
        });
        const f3 = makeDoc(SHA('9'), 'Zenbox', 3000, { behash: 'second', sigma_analysis_results: [{ rule_id: 'Sig-Both' }] });
        await f.sink.upsert(sinkDocs([f2]));
        assert.deepEqual(await f.sink.query('dropped_sha256', DROP), [f2.id]);
        await f.sink.upsert(sinkDocs([f3]));
        assert.deepEqual(await f.sink.query('behash', 'first'), []);
        assert.deepEqual(await f.sink.query('behash', 'second'), [f3.id]);
        assert.deepEqual(await f.sink.query('sigma_rule_id', 'Sig-Old'), []);
        assert.deepEqual(await f.sink.query('sigma_rule_id', 'Sig-Both'), [f3.id]);
        assert.deepEqual(await f.sink.query('ja3', JA3_A), []);
        assert.deepEqual(await f.sink.query('ja3s', 'c'.repeat(32)), []);
        assert.deepEqual(await f.sink.query('dropped_sha256', DROP), []);
      } finally {
        await f.close();
      }
    });

    test('versions of one behaviour in one call: the newest wins, and only its pivots stay', async () => {
      const f = await open();
      try {
        const v1 = makeDoc(SHA('7'), 'Zenbox', 1000, { behash: 'v1-hash', ja3_digests: [JA3_A] });
        const v2 = makeDoc(SHA('7'), 'Zenbox', 2000, { behash: 'v2-hash' });
        const v0 = makeDoc(SHA('7'), 'Zenbox', 500, { behash: 'v0-hash' });
        const other = makeDoc(SHA('8'), 'Zenbox', 1000, { behash: 'v1-hash' });
        const res = await f.sink.upsert(sinkDocs([v1, other, v2, v0]));
        assert.deepEqual(
          res.map((r) => r.status === 'ok' && (r.stale ?? false)),
          [false, false, false, true],
        );
        assert.deepEqual(await f.sink.get(v2.id), v2);
        assert.deepEqual(await f.sink.query('behash', 'v1-hash'), [other.id]);
        assert.deepEqual(await f.sink.query('behash', 'v2-hash'), [v2.id]);
        assert.deepEqual(await f.sink.query('behash', 'v0-hash'), []);
        assert.deepEqual(await f.sink.query('ja3', JA3_A), []);

        // the version written last has no pivots at all: the earlier one's are gone too
        const w1 = makeDoc(SHA('6'), 'Zenbox', 1000, { behash: 'w1-hash' });
        const w2 = makeDoc(SHA('6'), 'Zenbox', 2000, {});
        await f.sink.upsert(sinkDocs([w1, w2]));
        assert.deepEqual(await f.sink.get(w2.id), w2);
        assert.deepEqual(await f.sink.query('behash', 'w1-hash'), []);
      } finally {
        await f.close();
      }
    });

    test('replaying the same writes converges to the same store', async () => {
      const f = await open();
      try {
        const docs = corpus();
        await f.sink.upsert(sinkDocs(docs));
        await f.sink.upsert(sinkDocs([...docs].reverse()));
        await f.sink.upsert(sinkDocs(docs));
        assert.equal(await f.sink.count(), 3);
        assert.deepEqual(await f.sink.query('behash', 'b1'), [docs[0]!.id, docs[1]!.id].sort());
        for (const d of docs) assert.deepEqual(await f.sink.get(d.id), d);
      } finally {
        await f.close();
      }
    });

    test('one bad document is rejected on its own; the rest of the chunk is written', async () => {
      const f = await open();
      try {
        const [a, b] = corpus();
        const bad = { ...a!, id: null } as unknown as BehaviourDoc;
        const res = await f.sink.upsert(sinkDocs([a!, bad, b!]));
        assert.equal(res[0]?.status, 'ok');
        assert.equal(res[1]?.status, 'rejected');
        assert.equal(res[2]?.status, 'ok');
        assert.equal(await f.sink.count(), 2);
      } finally {
        await f.close();
      }
    });

    test('a document nested past the depth limit is rejected too_deep before any write, without stack overflow', async () => {
      const f = await open();
      try {
        const [a, b] = corpus();
        let nest: unknown = 'leaf';
        for (let i = 0; i < 5000; i++) nest = { n: nest };
        // built past the normalizer, as a document from another path (a replayed index dead letter) could be
        const deep = makeDoc('e'.repeat(64), 'Zenbox', 9, {});
        (deep.attributes as Record<string, unknown>).unknown_blob = nest;
        const res = await f.sink.upsert(sinkDocs([a!, deep, b!]));
        assert.deepEqual(
          res.map((r) => [r.status, r.status === 'rejected' ? r.code : '']),
          [
            ['ok', ''],
            ['rejected', 'too_deep'],
            ['ok', ''],
          ],
        );
        assert.equal(await f.sink.get(deep.id), null);
      } finally {
        await f.close();
      }
    });
  });
}
