import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import type { Client } from '@elastic/elasticsearch';
import type { BehaviourDoc } from '../../src/normalize/index.js';
import {
  ecsProjection,
  MAPPING_VERSION,
  openElasticsearchStore,
  runPool,
  setupPlan,
  type DeadLetterInput,
  type ElasticsearchStore,
  type ElasticsearchStoreOptions,
} from '../../src/store/index.js';
import { artefactLogConformance } from './artefactLogConformance.js';
import { bookkeepingConformance } from './bookkeepingConformance.js';
import { huntConformance } from './huntConformance.js';
import { FakeElasticsearch, mockedClient, type ItemError } from '../support/fakeElasticsearch.js';
import { TEST_INDEX_LAYOUT, openRealStore, realCluster } from '../support/realElasticsearch.js';
import { makePrivateFile, privateFileConformance } from './privateFileConformance.js';
import { retentionConformance } from './retentionConformance.js';
import { makeDoc, sinkConformance } from './sinkConformance.js';
import { sinkDocs } from './sinkConformance.js';
import { watchConformance } from './watchConformance.js';
import { collectionConformance } from './collectionConformance.js';

let n = 0;

interface Mocked {
  fake: FakeElasticsearch;
  client: Client;
  store: ElasticsearchStore;
  prefix: string;
  close(): Promise<void>;
}

/** The production store on the official client, whose transport is @elastic/elasticsearch-mock over the fake. */
function openMocked(o: ElasticsearchStoreOptions = {}): Mocked {
  const fake = new FakeElasticsearch();
  const client = mockedClient(fake);
  const prefix = `t${n++}`;
  const store = openElasticsearchStore('es:http://localhost:9200', { client, indexPrefix: prefix, refresh: 'wait_for', ...o });
  return {
    fake,
    client,
    store,
    prefix,
    close: async () => {
      await store.close();
      await client.close();
      await fake.close();
    },
  };
}

// The conformance suites run on the real node only (the fake's answers are checked against a real
// node's in test/support/fakeVsReal.test.ts); the mock below is for the wire format and the faults
// a real node cannot be made to give.
const real = await realCluster();
const skip = 'skip' in real ? real.skip : undefined;
sinkConformance(
  'elasticsearch (real cluster)',
  async () => {
    const r = openRealStore(real as Exclude<typeof real, { skip: string }>);
    return { sink: r.store.sink, close: r.close };
  },
  { skip },
);
bookkeepingConformance(
  'elasticsearch (real cluster)',
  async () => {
    const r = openRealStore(real as Exclude<typeof real, { skip: string }>);
    return { sink: r.store.sink, dlq: r.store.dlq, batches: r.store.batches, close: r.close };
  },
  { skip },
);
privateFileConformance(
  'elasticsearch (real cluster)',
  async () => {
    const r = openRealStore(real as Exclude<typeof real, { skip: string }>);
    return { privateFiles: r.store.privateFiles, close: r.close };
  },
  { skip },
);
artefactLogConformance(
  'elasticsearch (real cluster)',
  async () => {
    const r = openRealStore(real as Exclude<typeof real, { skip: string }>);
    return { artefacts: r.store.artefacts, close: r.close };
  },
  { skip },
);
watchConformance(
  'elasticsearch (real cluster)',
  async () => {
    const r = openRealStore(real as Exclude<typeof real, { skip: string }>);
    return { watches: r.store.watches, close: r.close };
  },
  { skip },
);
collectionConformance(
  'elasticsearch (real cluster)',
  async () => {
    const cluster = real as Exclude<typeof real, { skip: string }>;
    const r = openRealStore(cluster);
    return {
      collections: r.store.collections,
      other: async () => {
        // another process's client on the same indices
        const other = openElasticsearchStore(`es:${cluster.url}`, { ...cluster.auth, indexPrefix: r.prefix, maxRetries: 0 });
        return { collections: other.collections, close: () => other.close() };
      },
      close: r.close,
    };
  },
  { skip },
);
huntConformance(
  'elasticsearch (real cluster)',
  async () => {
    const r = openRealStore(real as Exclude<typeof real, { skip: string }>);
    return { sink: r.store.sink, hunt: r.store.hunt, close: r.close };
  },
  { skip },
);
retentionConformance(
  'elasticsearch (real cluster)',
  async ({ retentionDays, now }) => {
    const cluster = real as Exclude<typeof real, { skip: string }>;
    // the fixture's prefix and cleanup, with a store of its own that has the retention and the clock
    const r = openRealStore(cluster);
    const o = {
      ...cluster.auth,
      indexPrefix: r.prefix,
      refresh: 'wait_for' as const,
      maxRetries: 0,
      retentionDays,
      now,
      index: TEST_INDEX_LAYOUT,
    };
    const store = openElasticsearchStore(`es:${cluster.url}`, o);
    return {
      store,
      // the fixture's close deletes every day index behind the alias, the templates and the policy
      close: async () => {
        try {
          await r.close();
        } finally {
          await store.close();
        }
      },
    };
  },
  { skip },
);

const SHA = (c: string): string => c.repeat(64);
const docs = (): BehaviourDoc[] => [
  makeDoc(SHA('a'), 'Zenbox', 1000, { behash: 'h1', tls: [{ ja3: 'a'.repeat(32), ja3s: 'b'.repeat(32) }] }),
  makeDoc(SHA('b'), 'CAPE Sandbox', 2000, { behash: 'h2', files_dropped: [{ path: 'x', sha256: SHA('d') }] }),
  makeDoc(SHA('c'), 'Zenbox', 3000, { sigma_analysis_results: [{ rule_id: 'Sig-1' }] }),
];
/** The bulk bodies of behaviour writes (the locator's records go to `/<locator>/_bulk`). */
const bulks = (m: Mocked): unknown[][] =>
  m.fake.requests.filter((r) => r.method === 'POST' && r.path === '/_bulk').map((r) => r.body as unknown[]);

describe('elasticsearch sink: what goes over the wire (mock)', () => {
  test('the first write sends exactly the setup plan, records every id in the locator, looks up no partition where the locator lists none, creates the day index, then one bulk of external_gte index actions to it', async () => {
    const m = openMocked();
    try {
      const d = docs();
      assert.deepEqual(
        (await m.store.sink.upsert(sinkDocs(d))).map((r) => r.status),
        ['ok', 'ok', 'ok'],
      );
      const day = `${m.prefix}-behaviours-1970.01.01`;
      const locator = `${m.prefix}-locator`;
      const sent = m.fake.requests.filter((r) => r.method === 'PUT').map((r) => ({ path: r.path, body: r.body }));
      const plan = setupPlan({ prefix: m.prefix }).filter((s) => s.when !== 'exists');
      const complete = { _meta: { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION, complete: true } };
      assert.deepEqual(sent, [
        ...plan.map((s) => ({ path: s.path, body: s.body })),
        // a store this setup created holds nothing: its locator is complete at once
        { path: `/${locator}/_mapping`, body: complete },
        { path: `/${day}`, body: undefined },
      ]);
      // the lookup: one real-time mget of the locator; it lists no partition, so no copy is looked up
      const lookups = m.fake.requests.filter((r) => r.path === `/${locator}/_mget`);
      assert.deepEqual(
        lookups.map((r) => r.body),
        [{ ids: d.map((doc) => doc.id) }],
      );
      assert.equal(m.fake.requests.filter((r) => r.path === '/_mget').length, 0);
      // each id recorded with its day before the write, created (no other writer's entry to merge)
      const records = m.fake.requests.filter((r) => r.path === `/${locator}/_bulk`).map((r) => r.body);
      assert.deepEqual(records, [d.flatMap((doc) => [{ create: { _id: doc.id } }, { indices: [day], last_day: 0 }])]);
      const [bulk, ...more] = bulks(m);
      assert.equal(more.length, 0);
      assert.deepEqual(
        bulk,
        d.flatMap((doc) => [
          { index: { _index: day, _id: doc.id, version: doc.last_modification_date, version_type: 'external_gte' } },
          { ...doc, ...ecsProjection(doc) },
        ]),
      );
      assert.equal(m.fake.requests.find((r) => r.path === '/_bulk')?.querystring.refresh, 'wait_for');
      // a second write in the same process: no setup, no day created, nothing to record (its entry
      // lists its day), one lookup of the locator and one of the partition it lists, one bulk
      const before = m.fake.requests.length;
      await m.store.sink.upsert(sinkDocs([d[0]!]));
      const second = m.fake.requests.slice(before);
      assert.ok(!second.some((r) => r.method === 'PUT'), second.map((r) => r.path).join(', '));
      assert.deepEqual(
        second.filter((r) => r.method === 'POST').map((r) => r.path),
        [`/${locator}/_mget`, '/_mget', '/_bulk'],
      );
      assert.deepEqual(second.find((r) => r.path === '/_mget')?.body, { docs: [{ _index: day, _id: d[0]!.id }] });
    } finally {
      await m.close();
    }
  });

  test('bulk bodies are bounded by flushBytes (a larger single document goes alone)', async () => {
    const m = openMocked({ flushBytes: 4096 });
    try {
      const many = Array.from({ length: 12 }, (_, i) =>
        makeDoc(i.toString(16).padStart(64, '0'), 'Zenbox', 1000 + i, {
          behash: `h${i}`,
          command_executions: ['x'.repeat(i === 5 ? 6000 : 300)],
        }),
      );
      assert.ok((await m.store.sink.upsert(sinkDocs(many))).every((r) => r.status === 'ok'));
      const sizes = bulks(m).map((lines) => lines.reduce<number>((s, l) => s + Buffer.byteLength(JSON.stringify(l)) + 1, 0));
      assert.ok(sizes.length > 2, `${sizes.length} bulk requests`);
      const oversized = sizes.filter((s) => s > 4096);
      assert.equal(oversized.length, 1, 'only the request carrying the one 6 KB document exceeds the bound');
      assert.equal(bulks(m).find((_, k) => sizes[k]! > 4096)?.length, 2);
      assert.equal(bulks(m).flat().length, 24);
      assert.equal(await m.store.sink.count(), 12);
    } finally {
      await m.close();
    }
  });

  test('item-level 429 is retryable, item-level mapping errors and foreign conflicts are rejected with type and reason', async () => {
    const m = openMocked();
    try {
      const [a, b, c] = docs();
      await m.store.sink.upsert(sinkDocs([a!])); // setup done; faults below hit the documents only
      m.fake.failItems(
        (id, index) => id === b!.id && !index.endsWith('-locator'),
        { status: 429, type: 'es_rejected_execution_exception', reason: 'rejected execution of coordinating operation' },
        1,
      );
      m.fake.failItems(
        (id, index) => id === c!.id && !index.endsWith('-locator'),
        { status: 400, type: 'document_parsing_exception', reason: '[1:120] failed to parse field [analysis_date] of type [date]' },
        1,
      );
      m.fake.failItems(
        (id, index) => id === a!.id && !index.endsWith('-locator'),
        {
          status: 409,
          type: 'version_conflict_engine_exception',
          reason: `[${a!.id}]: version conflict, document already exists (current version [1])`,
        },
        1,
      );
      const r = await m.store.sink.upsert(sinkDocs([a!, b!, c!]));
      assert.equal(r[0]?.status, 'rejected');
      assert.equal(r[0]?.status === 'rejected' && r[0].code, 'version_conflict_engine_exception');
      assert.deepEqual(r[1] && { ...r[1], reason: undefined }, {
        id: b!.id,
        status: 'retryable',
        code: 'es_rejected_execution_exception',
        reason: undefined,
      });
      assert.equal(r[2]?.status, 'rejected');
      assert.equal(r[2]?.status === 'rejected' && r[2].code, 'document_parsing_exception');
      assert.match(r[2]?.status === 'rejected' ? r[2].reason : '', /failed to parse field \[analysis_date\].*\[status 400\]/);
      // the retryable one goes through when sent again; the rejected one was not written
      assert.deepEqual(
        (await m.store.sink.upsert(sinkDocs([b!]))).map((x) => x.status),
        ['ok'],
      );
      assert.equal(await m.store.sink.get(c!.id), null);
      assert.deepEqual(await m.store.sink.get(b!.id), b);
    } finally {
      await m.close();
    }
  });

  test("the dead-letter index's items refused for a block, privileges or load are the store's faults, as the behaviours' are", async () => {
    const m = openMocked();
    try {
      const letterOf = (id: string): DeadLetterInput => ({
        id,
        stage: 'normalize',
        batch: '202611070000',
        line: 1,
        docId: null,
        code: 'not_json',
        path: '$',
        message: 'bad',
        raw: '{',
        rawEncoding: 'utf8',
        rawSize: 1,
        rawTruncated: false,
      });
      await m.store.dlq.put([letterOf('normalize:202611070000:0')]); // the index exists; the faults below hit items only
      const cases: [ItemError, string, RegExp][] = [
        [
          { status: 403, type: 'cluster_block_exception', reason: 'index [x] blocked by: [FORBIDDEN/8/index write (api)];' },
          'STORE_READONLY',
          /index blocked for writes/,
        ],
        [
          {
            status: 429,
            type: 'cluster_block_exception',
            reason:
              'index [x] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];',
          },
          'STORE_FULL',
          /disk full/,
        ],
        [
          { status: 403, type: 'security_exception', reason: 'action [indices:data/write/bulk[s]] is unauthorized for user [ingest]' },
          'SINK_AUTH',
          /refused the credentials or privileges/,
        ],
        [
          { status: 429, type: 'es_rejected_execution_exception', reason: 'rejected execution' },
          'SINK_UNAVAILABLE',
          /dead-letter store put failed/,
        ],
      ];
      for (const [error, code, message] of cases) {
        m.fake.failItems((id, index) => id === 'normalize:202611070000:1' && !index.endsWith('-locator'), error, 1);
        await assert.rejects(m.store.dlq.put([letterOf('normalize:202611070000:1')]), (err: Error & { code?: string }) => {
          assert.equal(err.code, code, err.message);
          assert.match(err.message, message);
          return true;
        });
      }
      await m.store.dlq.put([letterOf('normalize:202611070000:1')]);
      assert.equal(await m.store.dlq.count(), 2);
    } finally {
      await m.close();
    }
  });

  test('request-level 503 and connection errors make every item retryable; the next write succeeds', async () => {
    const m = openMocked();
    try {
      const d = docs();
      await m.store.sink.upsert(sinkDocs([d[0]!]));
      m.fake.failRequests({ path: /^\/_bulk$/ }, { status: 503 }, 1);
      const r1 = await m.store.sink.upsert(sinkDocs(d));
      assert.deepEqual(
        r1.map((x) => [x.status, x.status === 'ok' ? '' : x.code]),
        d.map(() => ['retryable', 'http_503']),
      );
      m.fake.failRequests({ path: /^\/_bulk$/ }, 'connection', 1);
      const r2 = await m.store.sink.upsert(sinkDocs(d));
      assert.deepEqual(
        r2.map((x) => [x.status, x.status === 'ok' ? '' : x.code]),
        d.map(() => ['retryable', 'connection_error']),
      );
      assert.ok((await m.store.sink.upsert(sinkDocs(d))).every((x) => x.status === 'ok'));
      assert.equal(await m.store.sink.count(), 3);
    } finally {
      await m.close();
    }
  });

  test('a request-level 413 is split until each part fits; nothing is lost', async () => {
    const m = openMocked();
    try {
      const d = docs();
      await m.store.sink.upsert(sinkDocs([d[0]!]));
      m.fake.failRequests({ path: /^\/_bulk$/ }, { status: 413 }, 2);
      assert.ok((await m.store.sink.upsert(sinkDocs(d))).every((x) => x.status === 'ok'));
      assert.deepEqual(
        bulks(m)
          .slice(1)
          .map((b) => b.length / 2),
        [3, 2, 1, 1, 1],
      );
      assert.equal(await m.store.sink.count(), 3);
    } finally {
      await m.close();
    }
  });

  test('check: the cluster answers; refused credentials are SINK_AUTH, an unavailable cluster SINK_UNAVAILABLE naming it', async () => {
    const m = openMocked();
    try {
      await m.store.check();
      m.fake.failRequests({ method: 'GET' }, { status: 401 }, 1);
      await assert.rejects(m.store.check(), (err: Error & { code?: string }) => err.code === 'SINK_AUTH');
      m.fake.failRequests({ method: 'GET' }, { status: 503 }, 2);
      await assert.rejects(
        m.store.check(),
        (err: Error & { code?: string }) =>
          err.code === 'SINK_UNAVAILABLE' && /cannot reach Elasticsearch at elasticsearch:http:\/\/localhost:9200/.test(err.message),
      );
      await m.store.check();
    } finally {
      await m.close();
    }
  });

  test('refused credentials stop the writer with a message that holds no secret', async () => {
    const m = openMocked({ apiKey: 'c2VjcmV0OmtleQ==' });
    try {
      m.fake.failRequests({ method: 'PUT' }, { status: 401 }, 1);
      await assert.rejects(m.store.sink.upsert(sinkDocs(docs())), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'SINK_AUTH');
        assert.ok(!err.message.includes('c2VjcmV0OmtleQ=='));
        return true;
      });
    } finally {
      await m.close();
    }
  });

  test('a deleted day index is created again by the next write; with every partition gone, the setup runs again', async () => {
    const m = openMocked();
    try {
      const [a, b, c] = docs();
      await m.store.sink.upsert(sinkDocs([a!]));
      const day = `${m.prefix}-behaviours-1970.01.01`;
      await m.client.indices.delete({ index: day });
      assert.deepEqual(
        (await m.store.sink.upsert(sinkDocs([b!]))).map((x) => x.status),
        ['ok'],
      );
      assert.deepEqual(await m.store.sink.get(b!.id), b);
      assert.deepEqual(m.fake.aliasIndices(`${m.prefix}-behaviours`), [`${m.prefix}-behaviours-000001`, day]);
      // the alias itself gone: the write brings the setup back and goes through
      await m.client.indices.delete({ index: [day, `${m.prefix}-behaviours-000001`] });
      assert.deepEqual(
        (await m.store.sink.upsert(sinkDocs([c!]))).map((x) => x.status),
        ['ok'],
      );
      assert.deepEqual(await m.store.sink.get(c!.id), c);
      assert.equal(await m.store.sink.count(), 1);
    } finally {
      await m.close();
    }
  });
});

describe('elasticsearch private files: their own index (mock)', () => {
  test('setup creates <prefix>-private-files with hashes, vhash, tags and TrID types as keywords', async () => {
    const m = openMocked();
    try {
      const doc = makePrivateFile('a'.repeat(64), 1000, { md5: 'B'.repeat(32), vhash: 'Vh', tags: ['peexe'] });
      assert.deepEqual(await m.store.privateFiles.upsert([doc]), [{ id: doc.id, status: 'ok' }]);
      const index = `${m.prefix}-private-files`;
      const got = (await m.client.indices.getMapping({ index }))[index]?.mappings as {
        dynamic: unknown;
        properties: Record<
          string,
          { type?: string; normalizer?: string; enabled?: boolean; properties?: Record<string, { type?: string }> }
        >;
      };
      const p = got.properties;
      assert.equal(String(got.dynamic), 'false');
      for (const f of ['sha256', 'sha1', 'md5']) assert.deepEqual([p[f]?.type, p[f]?.normalizer], ['keyword', 'sandtrail_lowercase'], f);
      for (const f of ['vhash', 'ssdeep', 'tags', 'magic', 'id']) assert.equal(p[f]?.type, 'keyword', f);
      assert.equal(p.vhash?.normalizer, undefined, 'vhash is compared exactly');
      assert.equal(p.trid?.properties?.file_type?.type, 'keyword');
      assert.equal(p.trid?.properties?.probability?.type, 'float');
      assert.equal(p.size?.type, 'long');
      assert.equal(p.fetched_at?.type, 'date');
      assert.equal(p.exiftool?.type, 'flattened');
      assert.equal(p.gti_assessment?.enabled, false);
      assert.equal(p.attributes?.enabled, false);

      // written to that index only, as an externally versioned index action keyed by sha256
      const bulk = bulks(m).at(-1);
      assert.deepEqual(bulk?.[0], { index: { _index: index, _id: doc.id, version: 1000, version_type: 'external_gte' } });
      assert.deepEqual(m.fake.docs(index).get(doc.id), { source: doc, version: 1000 });
      assert.equal(m.fake.docs(`${m.prefix}-behaviours`).size, 0);
      assert.equal(await m.store.sink.count(), 0);
    } finally {
      await m.close();
    }
  });

  test('request-level failures: 503 retryable per item, 401 throws SINK_AUTH, 413 bisected', async () => {
    const m = openMocked();
    try {
      const docs = ['a', 'b', 'c'].map((c, i) => makePrivateFile(c.repeat(64), 100 + i));
      await m.store.privateFiles.upsert([docs[0]!]);
      m.fake.failRequests({ path: /^\/_bulk$/ }, { status: 503 }, 1);
      assert.deepEqual(
        (await m.store.privateFiles.upsert(docs)).map((r) => [r.status, r.status === 'ok' ? '' : r.code]),
        docs.map(() => ['retryable', 'http_503']),
      );
      m.fake.failRequests({ path: /^\/_bulk$/ }, { status: 413 }, 2);
      assert.ok((await m.store.privateFiles.upsert(docs)).every((r) => r.status === 'ok'));
      m.fake.failRequests({ path: /^\/_bulk$/ }, { status: 401 }, 1);
      await assert.rejects(m.store.privateFiles.upsert(docs), { code: 'SINK_AUTH' });
      assert.equal(await m.store.privateFiles.count(), 3);
    } finally {
      await m.close();
    }
  });

  test('a deleted private-files index comes back with its explicit mapping on the next write (the template stays)', async () => {
    const m = openMocked();
    try {
      const [a, b] = ['a', 'b'].map((c) => makePrivateFile(c.repeat(64), 1, { md5: 'C'.repeat(32) }));
      await m.store.privateFiles.upsert([a!]);
      const index = `${m.prefix}-private-files`;
      await m.client.indices.delete({ index });
      assert.deepEqual(
        (await m.store.privateFiles.upsert([b!])).map((r) => r.status),
        ['ok'],
      );
      const props = (await m.client.indices.getMapping({ index }))[index]?.mappings.properties as Record<string, { normalizer?: string }>;
      assert.equal(props.md5?.normalizer, 'sandtrail_lowercase');
      assert.deepEqual(await m.store.privateFiles.get(b!.id), b);
      assert.deepEqual(await m.store.privateFiles.query('md5', 'c'.repeat(32)), [b!.id]);
    } finally {
      await m.close();
    }
  });
});

test('runPool never has more than the limit in flight and visits every item once', async () => {
  let inFlight = 0;
  let peak = 0;
  const seen: number[] = [];
  await runPool(
    Array.from({ length: 20 }, (_, i) => i),
    3,
    async (i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 1 + (i % 4)));
      seen.push(i);
      inFlight--;
    },
  );
  assert.equal(peak, 3);
  assert.deepEqual(
    seen.sort((x, y) => x - y),
    Array.from({ length: 20 }, (_, i) => i),
  );
});

describe('elasticsearch artefact log: its own index (mock)', () => {
  test('setup creates <prefix>-artefacts with its explicit mapping; a record is one document keyed <behaviourId>|<kind>, refreshed at once', async () => {
    const m = openMocked();
    try {
      const id = `${'a'.repeat(64)}_VirusTotal Jujubox`;
      const rec = {
        behaviourId: id,
        kind: 'pcap',
        path: '/blobs/a.pcap',
        size: 42,
        sha256: 'b'.repeat(64),
        source: 'endpoint' as const,
        fetchedAt: 1_700_000_000_000,
      };
      await m.store.artefacts.record(rec);
      const index = `${m.prefix}-artefacts`;
      const got = (await m.client.indices.getMapping({ index }))[index]?.mappings as {
        dynamic: unknown;
        properties: Record<string, { type?: string; format?: string }>;
      };
      assert.equal(String(got.dynamic), 'false');
      assert.deepEqual(Object.fromEntries(Object.entries(got.properties).map(([k, v]) => [k, v.type])), {
        behaviour_id: 'keyword',
        kind: 'keyword',
        path: 'keyword',
        size: 'long',
        sha256: 'keyword',
        source: 'keyword',
        fetched_at: 'date',
        last_modified: 'long',
      });
      assert.equal(got.properties.fetched_at?.format, 'epoch_millis');

      const write = m.fake.requests.filter((r) => r.method === 'PUT' && r.path.startsWith(`/${index}/_doc/`));
      assert.equal(write.length, 1);
      assert.equal(decodeURIComponent(write[0]!.path), `/${index}/_doc/${id}|pcap`);
      assert.equal(write[0]!.querystring.refresh, 'true');
      assert.deepEqual(m.fake.docs(index).get(`${id}|pcap`)?.source, {
        behaviour_id: id,
        kind: 'pcap',
        path: '/blobs/a.pcap',
        size: 42,
        sha256: 'b'.repeat(64),
        source: 'endpoint',
        fetched_at: 1_700_000_000_000,
      });
      // apart from the reports: nothing behind the behaviours alias
      assert.equal(m.fake.docs(`${m.prefix}-behaviours`).size, 0);
    } finally {
      await m.close();
    }
  });

  test('a deleted artefacts index comes back with its explicit mapping (the template stays); a read error is SINK_UNAVAILABLE', async () => {
    const m = openMocked();
    try {
      const rec = (kind: string) => ({
        behaviourId: 'x',
        kind,
        path: '/p',
        size: 1,
        sha256: 'c'.repeat(64),
        source: 'feed_link' as const,
        fetchedAt: 5,
      });
      await m.store.artefacts.record(rec('pcap'));
      const index = `${m.prefix}-artefacts`;
      await m.client.indices.delete({ index });
      assert.deepEqual(await m.store.artefacts.list('x'), []);
      await m.store.artefacts.record(rec('html'));
      const props = (await m.client.indices.getMapping({ index }))[index]?.mappings.properties as Record<string, { type?: string }>;
      assert.equal(props.kind?.type, 'keyword');
      assert.deepEqual(await m.store.artefacts.list('x'), [rec('html')]);

      m.fake.failRequests({ path: /_search$/ }, { status: 400 }, 1);
      await assert.rejects(m.store.artefacts.list('x'), { code: 'SINK_UNAVAILABLE' });
      m.fake.failRequests({ path: /_doc\// }, { status: 401 }, 1);
      await assert.rejects(m.store.artefacts.record(rec('evtx')), { code: 'SINK_AUTH' });
    } finally {
      await m.close();
    }
  });
});

describe('elasticsearch hunting reads: requests per question (mock)', () => {
  test('one search per read; related and a roll-up by MD5 take two', async () => {
    const m = openMocked();
    try {
      const doc = makeDoc(SHA('a'), 'Zenbox', 1000, { behash: 'h1', tls: [{ ja3: 'a'.repeat(32) }], verdicts: ['MALWARE'] });
      doc.context_attributes = { file_md5: 'c'.repeat(32) };
      await m.store.sink.upsert(sinkDocs([doc, makeDoc(SHA('b'), 'Zenbox', 1000, { behash: 'h1' })]));
      const searches = async (read: () => Promise<unknown>): Promise<number> => {
        const before = m.fake.requests.length;
        await read();
        return m.fake.requests.slice(before).filter((r) => r.path.endsWith('/_search')).length;
      };
      assert.equal(await searches(() => m.store.hunt.pivotStats('behash', 'h1')), 1);
      assert.equal(await searches(() => m.store.hunt.top('behash', { since: 0 })), 1);
      assert.equal(await searches(() => m.store.hunt.related(doc.id)), 2);
      assert.equal(await searches(() => m.store.hunt.fileRollup(SHA('a'))), 1);
      assert.equal(await searches(() => m.store.hunt.fileRollup('c'.repeat(32))), 2);
    } finally {
      await m.close();
    }
  });
});
