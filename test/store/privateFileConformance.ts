import assert from 'node:assert/strict';
import { describe, test as vitestTest } from 'vitest';
import { normalizePrivateFile, type PrivateFileDoc } from '../../src/normalize/index.js';
import type { PrivateFileStore } from '../../src/store/index.js';

export interface PrivateFileFixture {
  privateFiles: PrivateFileStore;
  close(): Promise<void>;
}

const hex = (c: string, n: number): string => c.repeat(n);

/** A private file document built by the real normalizer from an API response. */
export function makePrivateFile(sha256: string, fetchedAt: number, attrs: Record<string, unknown> = {}): PrivateFileDoc {
  const r = normalizePrivateFile({ data: { type: 'private_file', id: sha256, attributes: { sha256, ...attrs } } }, { fetchedAt });
  assert.ok(r.ok, JSON.stringify(!r.ok && r.rejection));
  return r.doc;
}

/** Three reports: a and b share a vhash, b and c share nothing else. */
function corpus(): PrivateFileDoc[] {
  return [
    makePrivateFile(hex('a', 64), 1000, {
      sha1: hex('1', 40),
      md5: hex('a', 32),
      vhash: 'VH-1',
      size: 1024,
      magic: 'PE32 executable (GUI) Intel 80386, for MS Windows',
      tags: ['peexe', 'signed'],
      exiftool: { MIMEType: 'application/x-dosexec', FileType: 'Win32 EXE', 'Dotted.Key': 'x' },
      trid: [{ file_type: 'Win32 Executable (generic)', probability: 52.1 }],
      ssdeep: '24:abc:def',
      gti_assessment: { verdict: { value: 'VERDICT_MALICIOUS' }, threat_score: { value: 90 } },
      first_seen_itw_date: 1_700_000_000,
    }),
    makePrivateFile(hex('b', 64), 1000, { sha1: hex('2', 40), md5: hex('b', 32), vhash: 'VH-1', tags: 'pdf' }),
    makePrivateFile(hex('c', 64), 1000, { sha1: hex('3', 40), md5: hex('c', 32), vhash: 'vh-1' }),
  ];
}

/**
 * One private-file contract for every backend: round trip, newer fetched_at wins, lookups by
 * each key, per-item failures. Each implementation runs it with its own fixture factory.
 */
export function privateFileConformance(name: string, open: () => Promise<PrivateFileFixture>, opts: { skip?: string } = {}): void {
  const test = (title: string, fn: () => Promise<void>): void => {
    // a skipped case names its reason, so a missing cluster is visible in the summary
    if (opts.skip) vitestTest.skip(`${title} [skipped: ${opts.skip}]`, fn);
    else vitestTest(title, fn);
  };
  describe(`private file store conformance: ${name}`, () => {
    test('upsert then get returns the document exactly; unknown sha256 is null; count', async () => {
      const f = await open();
      try {
        const docs = corpus();
        assert.equal(await f.privateFiles.count(), 0);
        assert.equal(await f.privateFiles.get(hex('a', 64)), null, 'empty store');
        const res = await f.privateFiles.upsert(docs);
        assert.deepEqual(
          res,
          docs.map((d) => ({ id: d.id, status: 'ok' })),
        );
        assert.equal(await f.privateFiles.count(), 3);
        for (const d of docs) assert.deepEqual(await f.privateFiles.get(d.id), d);
        assert.deepEqual(await f.privateFiles.get(hex('A', 64)), docs[0], 'get takes any case');
        assert.equal(await f.privateFiles.get(hex('f', 64)), null);
        assert.equal(await f.privateFiles.get('not a hash'), null);
      } finally {
        await f.close();
      }
    });

    test('query by each key: hashes in any case, vhash exactly; sorted ids; unknown values give []', async () => {
      const f = await open();
      try {
        const [a, b, c] = corpus();
        await f.privateFiles.upsert([c!, b!, a!]);
        assert.deepEqual(await f.privateFiles.query('sha256', hex('A', 64)), [a!.id]);
        assert.deepEqual(await f.privateFiles.query('sha256', ` ${hex('b', 64)} `), [b!.id]);
        assert.deepEqual(await f.privateFiles.query('sha1', hex('1', 40)), [a!.id]);
        assert.deepEqual(await f.privateFiles.query('md5', hex('C', 32)), [c!.id]);
        assert.deepEqual(await f.privateFiles.query('vhash', 'VH-1'), [a!.id, b!.id]);
        assert.deepEqual(await f.privateFiles.query('vhash', 'vh-1'), [c!.id]);
        assert.deepEqual(await f.privateFiles.query('vhash', 'VH-2'), []);
        assert.deepEqual(await f.privateFiles.query('md5', hex('d', 32)), []);
        assert.deepEqual(await f.privateFiles.query('sha1', ''), []);
      } finally {
        await f.close();
      }
    });

    test('the newer fetched_at wins whatever the arrival order; an equal one is idempotent; lookups follow', async () => {
      const f = await open();
      try {
        const sha = hex('e', 64);
        const old = makePrivateFile(sha, 1000, { md5: hex('1', 32), vhash: 'old', tags: ['old'] });
        const newer = makePrivateFile(sha, 2000, { md5: hex('2', 32), vhash: 'new', tags: ['new'] });
        assert.deepEqual(await f.privateFiles.upsert([newer]), [{ id: sha, status: 'ok' }]);
        assert.deepEqual(await f.privateFiles.upsert([old]), [{ id: sha, status: 'ok', stale: true }]);
        assert.deepEqual(await f.privateFiles.get(sha), newer);
        assert.deepEqual(await f.privateFiles.query('md5', hex('1', 32)), []);
        assert.deepEqual(await f.privateFiles.query('vhash', 'old'), []);

        // equal fetched_at: rewritten, same state, replays converge
        assert.deepEqual(await f.privateFiles.upsert([newer, newer]), [
          { id: sha, status: 'ok' },
          { id: sha, status: 'ok' },
        ]);
        assert.deepEqual(await f.privateFiles.get(sha), newer);
        assert.equal(await f.privateFiles.count(), 1);

        // in order: the later report replaces the earlier one, and its lookup values with it
        const later = makePrivateFile(sha, 3000, { md5: hex('3', 32), vhash: 'later' });
        assert.equal((await f.privateFiles.upsert([later]))[0]?.status, 'ok');
        assert.deepEqual(await f.privateFiles.get(sha), later);
        assert.deepEqual(await f.privateFiles.query('vhash', 'new'), []);
        assert.deepEqual(await f.privateFiles.query('vhash', 'later'), [sha]);
        assert.deepEqual(await f.privateFiles.query('md5', hex('3', 32)), [sha]);
        assert.equal(await f.privateFiles.count(), 1);
      } finally {
        await f.close();
      }
    });

    test('a bad document is rejected on its own; an odd but valid one is stored; the batch goes through', async () => {
      const f = await open();
      try {
        const [a, b] = corpus();
        const noId = { ...a!, id: null } as unknown as PrivateFileDoc;
        const upperId = { ...b!, id: hex('B', 64) };
        const badDate = { ...a!, id: hex('d', 64), sha256: hex('d', 64), fetched_at: -5 };
        let nest: unknown = 'leaf';
        for (let i = 0; i < 5000; i++) nest = { n: nest };
        const deep = { ...makePrivateFile(hex('9', 64), 1), gti_assessment: nest };
        // odd for a mapping, fine as data: empty, dotted and __proto__ keys, long values, a huge
        // number, gti_assessment as a string, unknown fields of every JSON type
        const odd = makePrivateFile(hex('0', 64), 7, {
          tags: ['x'.repeat(5000), ''],
          exiftool: { 'a.b.c': 'dotted', Long: 'y'.repeat(3000) },
          magic: 'z'.repeat(20_000),
          trid: [{ file_type: 'T', probability: 1e300 }],
          gti_assessment: 'opaque',
          '': 'empty key',
          'dotted.name': { '': [1, 'two', null, { x: true }] },
          nested_list: [[[[]]]],
        });
        Object.defineProperty(odd.attributes, '__proto__', { value: { p: 1 }, enumerable: true, writable: true, configurable: true });
        const res = await f.privateFiles.upsert([a!, noId, upperId, badDate, deep, odd, b!]);
        assert.deepEqual(
          res.map((r) => [r.id, r.status, r.status === 'rejected' ? r.code : '']),
          [
            [a!.id, 'ok', ''],
            ['null', 'rejected', 'invalid_document'],
            [hex('B', 64), 'rejected', 'invalid_document'],
            [hex('d', 64), 'rejected', 'invalid_document'],
            [hex('9', 64), 'rejected', 'too_deep'],
            [odd.id, 'ok', ''],
            [b!.id, 'ok', ''],
          ],
        );
        assert.equal(await f.privateFiles.count(), 3);
        assert.deepEqual(await f.privateFiles.get(odd.id), JSON.parse(JSON.stringify(odd)));
        assert.deepEqual(await f.privateFiles.query('md5', hex('0', 32)), []);
        assert.equal(await f.privateFiles.get(hex('9', 64)), null);
      } finally {
        await f.close();
      }
    });
  });
}
