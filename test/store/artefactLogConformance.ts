import assert from 'node:assert/strict';
import { describe, test as vitestTest } from 'vitest';
import type { ArtefactLog, ArtefactRecord } from '../../src/store/index.js';

export interface ArtefactLogFixture {
  artefacts: ArtefactLog;
  close(): Promise<void>;
}

/** A behaviour id as the feed has them: sample sha256, `_`, sandbox name (spaces included). */
const behaviourId = (c: string, sandbox = 'VirusTotal Jujubox'): string => `${c.repeat(64)}_${sandbox}`;

function artefact(id: string, kind: string, o: Partial<ArtefactRecord> = {}): ArtefactRecord {
  return {
    behaviourId: id,
    kind,
    path: `/var/lib/sandtrail/blobs/${id.slice(0, 2)}/${id}.${kind}`,
    size: 1234,
    sha256: 'e'.repeat(64),
    source: 'feed_link',
    fetchedAt: 1_700_000_000_123,
    ...o,
  };
}

/**
 * One artefact-log contract for every backend: round trip, upsert by (behaviourId, kind), the
 * list sorted by kind and limited to one report. Each implementation runs it with its own
 * fixture factory.
 */
export function artefactLogConformance(name: string, open: () => Promise<ArtefactLogFixture>, opts: { skip?: string } = {}): void {
  const test = (title: string, fn: () => Promise<void>): void => {
    // a skipped case names its reason, so a missing cluster is visible in the summary
    if (opts.skip) vitestTest.skip(`${title} [skipped: ${opts.skip}]`, fn);
    else vitestTest(title, fn);
  };
  describe(`artefact log conformance: ${name}`, () => {
    test('record then list returns the record with every field; an unknown report lists nothing', async () => {
      const f = await open();
      try {
        const id = behaviourId('a', 'Zenbox');
        // before anything was recorded (an Elasticsearch store has not even set up its index)
        assert.deepEqual(await f.artefacts.list(id), []);
        const rec = artefact(id, 'pcap', {
          size: 987_654_321_012,
          source: 'endpoint',
          sha256: 'f'.repeat(64),
          lastModified: 1_793_606_400,
        });
        await f.artefacts.record(rec);
        assert.deepEqual(await f.artefacts.list(id), [rec]);
        assert.deepEqual(await f.artefacts.list(behaviourId('b', 'Zenbox')), []);
      } finally {
        await f.close();
      }
    });

    test('a second record of the same (behaviourId, kind) replaces the first', async () => {
      const f = await open();
      try {
        const id = behaviourId('c', 'CAPE Sandbox');
        await f.artefacts.record(artefact(id, 'evtx', { size: 1, sha256: '1'.repeat(64), source: 'endpoint', fetchedAt: 1000 }));
        const again = artefact(id, 'evtx', { path: '/elsewhere/x.evtx', size: 2, sha256: '2'.repeat(64), fetchedAt: 2000 });
        await f.artefacts.record(again);
        // a record without a report version (as earlier versions wrote them) lists without one
        assert.deepEqual(await f.artefacts.list(id), [again]);
        // a retried job writing the same record again leaves it as it is
        await f.artefacts.record(again);
        assert.deepEqual(await f.artefacts.list(id), [again]);
      } finally {
        await f.close();
      }
    });

    test('several kinds are listed sorted by kind; other reports of the same sample are not listed', async () => {
      const f = await open();
      try {
        const id = behaviourId('d');
        const sibling = behaviourId('d', 'Zenbox');
        const other = behaviourId('e');
        const pcap = artefact(id, 'pcap');
        const evtx = artefact(id, 'evtx', { source: 'endpoint' });
        const memdump = artefact(id, 'memdump', { size: 0 });
        await f.artefacts.record(pcap);
        await f.artefacts.record(artefact(sibling, 'html'));
        await f.artefacts.record(artefact(other, 'evtx'));
        await f.artefacts.record(memdump);
        await f.artefacts.record(evtx);
        assert.deepEqual(await f.artefacts.list(id), [evtx, memdump, pcap]);
        assert.deepEqual(await f.artefacts.list(sibling), [artefact(sibling, 'html')]);
        assert.deepEqual(await f.artefacts.list(other), [artefact(other, 'evtx')]);
        // the id is matched exactly: neither a prefix nor another case of the sandbox name
        assert.deepEqual(await f.artefacts.list(id.slice(0, 64)), []);
        assert.deepEqual(await f.artefacts.list(id.toUpperCase()), []);
      } finally {
        await f.close();
      }
    });

    test('an id with spaces (a sandbox name) is recorded and listed', async () => {
      const f = await open();
      try {
        const id = `${'0123456789abcdef'.repeat(4)}_VirusTotal Jujubox`;
        const rec = artefact(id, 'html');
        await f.artefacts.record(rec);
        assert.deepEqual(await f.artefacts.list(id), [rec]);
      } finally {
        await f.close();
      }
    });
  });
}
