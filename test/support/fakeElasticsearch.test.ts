import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import { Client, errors, type estypes } from '@elastic/elasticsearch';
import { ElasticsearchSink, setupElasticsearch } from '../../src/store/index.js';
import { makeDoc } from '../store/sinkConformance.js';
import { FakeElasticsearch, mockedClient, type FakeElasticsearchOptions } from './fakeElasticsearch.js';
import { sinkDocs } from '../store/sinkConformance.js';

type Mode = 'mock' | 'http';

interface Env {
  fake: FakeElasticsearch;
  client: Client;
}

/** A fresh fake and an official client on it: through elasticsearch-mock, or over HTTP with gzip request bodies. */
async function withEnv(mode: Mode, fn: (e: Env) => Promise<void>, o: FakeElasticsearchOptions = {}): Promise<void> {
  const fake = new FakeElasticsearch(o);
  const client = mode === 'mock' ? mockedClient(fake) : new Client({ node: await fake.listen(), maxRetries: 0, compression: true });
  try {
    await fn({ fake, client });
  } finally {
    await client.close();
    await fake.close();
    await fake.close();
  }
}

async function rejects(p: Promise<unknown>): Promise<errors.ResponseError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof errors.ResponseError, `expected a ResponseError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the request to fail');
}

function errorOf(err: errors.ResponseError): { type?: string; reason?: string; root_cause?: { type: string; reason: string }[] } {
  return (err.body as { error: { type?: string; reason?: string; root_cause?: { type: string; reason: string }[] } }).error;
}

const SETTINGS: estypes.IndicesIndexSettings = {
  analysis: { normalizer: { lc: { type: 'custom', char_filter: [], filter: ['lowercase'] } } },
  index: { number_of_shards: 1 },
};
const MAPPINGS = {
  dynamic: false,
  properties: {
    id: { type: 'keyword' },
    h: { type: 'keyword', normalizer: 'lc', ignore_above: 16 },
    n: { type: 'long' },
    d: { type: 'date', format: 'epoch_second', ignore_malformed: true },
    ip: { type: 'ip' },
    pivots: { properties: { tag: { type: 'keyword', normalizer: 'lc' } } },
    attributes: { properties: { tls: { properties: { ja3: { type: 'keyword', normalizer: 'lc' } } } } },
    tree: { type: 'object', enabled: false },
    lookups: { type: 'nested', properties: { host: { type: 'keyword' } } },
    kv: { type: 'flattened' },
  },
};

async function templates(client: Client, pattern = 'logs-*'): Promise<void> {
  await client.cluster.putComponentTemplate({ name: 'c-settings', template: { settings: SETTINGS } });
  // a component template is validated alone, as a real cluster does: one whose mappings use a
  // normalizer defined only in another component is refused
  const refused = await rejects(client.cluster.putComponentTemplate({ name: 'c-mappings', template: { mappings: MAPPINGS as never } }));
  assert.match(errorOf(refused).reason ?? '', /normalizer \[lc\] not found for field \[h\]/);
  await client.cluster.putComponentTemplate({
    name: 'c-mappings',
    template: { settings: { analysis: SETTINGS.analysis }, mappings: MAPPINGS as never },
  });
  await client.indices.putIndexTemplate({
    name: 'logs',
    index_patterns: [pattern],
    composed_of: ['c-settings', 'c-mappings'],
    priority: 10,
  });
}

async function ids(client: Client, index: string, query: Record<string, unknown>): Promise<string[]> {
  const r = await client.search({ index, query, size: 100, _source: false });
  return r.hits.hits.map((h) => h._id as string).sort();
}

for (const mode of ['mock', 'http'] as const) {
  describe(`fake Elasticsearch through the official client (${mode})`, () => {
    test('templates shape explicitly created and auto-created indices', () =>
      withEnv(mode, async ({ fake, client }) => {
        await templates(client);
        await client.indices.putIndexTemplate({
          name: 'low',
          index_patterns: ['logs-*-x'],
          priority: 1,
          template: { mappings: { properties: { n: { type: 'keyword' } } } },
        });
        const clash = await rejects(client.indices.putIndexTemplate({ name: 'clash', index_patterns: ['logs-a*'], priority: 10 }));
        assert.equal(clash.statusCode, 400);
        assert.match(errorOf(clash).reason ?? '', /multiple index templates may not match/);

        await client.indices.create({ index: 'logs-a' });
        await client.index({ index: 'logs-b-x', id: '1', document: { id: '1', n: 3 } });
        assert.deepEqual(fake.indices(), ['logs-a', 'logs-b-x']);
        const m = await client.indices.getMapping({ index: 'logs-a,logs-b-x' });
        for (const name of ['logs-a', 'logs-b-x']) {
          const props = m[name]?.mappings.properties as Record<string, { type?: string; normalizer?: string }>;
          assert.equal(props.h?.normalizer, 'lc', name);
          assert.equal(props.n?.type, 'long', `${name}: the higher priority template wins`);
        }
        const t = await client.indices.getIndexTemplate({ name: 'logs' });
        assert.deepEqual(t.index_templates[0]?.index_template.composed_of, ['c-settings', 'c-mappings']);
        assert.deepEqual(Object.keys(fake.templates().component).sort(), ['c-mappings', 'c-settings']);
        const exists = await rejects(client.indices.create({ index: 'logs-a' }));
        assert.equal(errorOf(exists).type, 'resource_already_exists_exception');
        const badType = await rejects(client.indices.putMapping({ index: 'logs-a', properties: { h: { type: 'long' } } }));
        assert.equal(errorOf(badType).type, 'illegal_argument_exception');
        assert.match(errorOf(badType).reason ?? '', /cannot be changed from type \[keyword\] to \[long\]/);
        await client.indices.putMapping({ index: 'logs-a', properties: { added: { type: 'keyword' } } });
      }));

    test('normalizer, ignore_above, dotted paths and arrays of objects', () =>
      withEnv(mode, async ({ client }) => {
        await templates(client);
        await client.bulk({
          refresh: 'wait_for',
          operations: [
            { index: { _index: 'logs-1', _id: 'a' } },
            {
              id: 'a',
              h: 'AbC',
              pivots: { tag: 'X' },
              attributes: { tls: [{ ja3: 'J1' }, { ja3: 'J2' }] },
              kv: { k: { deep: 'V' } },
              tree: { any: [1, { x: 'y' }] },
            },
            { index: { _index: 'logs-1', _id: 'b' } },
            { id: 'b', h: 'x'.repeat(17), pivots: { tag: ['y', 'x'] }, lookups: [{ host: 'h1' }] },
          ],
        });
        assert.deepEqual(await ids(client, 'logs-1', { term: { h: 'ABC' } }), ['a']);
        assert.deepEqual(await ids(client, 'logs-1', { term: { h: { value: 'abc' } } }), ['a']);
        assert.deepEqual(await ids(client, 'logs-1', { term: { h: 'x'.repeat(17) } }), [], 'values above ignore_above are not indexed');
        assert.deepEqual(await ids(client, 'logs-1', { terms: { 'pivots.tag': ['X'] } }), ['a', 'b']);
        assert.deepEqual(await ids(client, 'logs-1', { term: { 'attributes.tls.ja3': 'j2' } }), ['a']);
        assert.deepEqual(await ids(client, 'logs-1', { term: { 'kv.k.deep': 'V' } }), ['a']);
        assert.deepEqual(await ids(client, 'logs-1', { term: { 'lookups.host': 'h1' } }), [], 'nested fields need a nested query');
        assert.deepEqual(await ids(client, 'logs-1', { nested: { path: 'lookups', query: { term: { 'lookups.host': 'h1' } } } }), ['b']);
        assert.deepEqual(
          await ids(client, 'logs-1', { bool: { filter: [{ exists: { field: 'h' } }], must_not: [{ ids: { values: ['b'] } }] } }),
          ['a'],
        );
        const r = await client.search({ index: 'logs-1', query: { ids: { values: ['b'] } } });
        assert.deepEqual(r.hits.hits[0]?._ignored, ['h']);
      }));

    test('dynamic:false keeps unmapped fields in _source only; type errors and ignore_malformed', () =>
      withEnv(mode, async ({ client }) => {
        await templates(client);
        await client.index({ index: 'logs-1', id: '1', document: { id: '1', extra: 'v', d: 'not a date' }, refresh: true });
        const got = await client.get<Record<string, unknown>>({ index: 'logs-1', id: '1', _source_excludes: ['d'] });
        assert.deepEqual(got._source, { id: '1', extra: 'v' });
        assert.deepEqual(await ids(client, 'logs-1', { term: { extra: 'v' } }), []);
        const sort = await rejects(client.search({ index: 'logs-1', sort: [{ extra: 'asc' }] }));
        assert.equal(sort.statusCode, 400);
        assert.equal(errorOf(sort).type, 'search_phase_execution_exception');
        assert.match(errorOf(sort).root_cause?.[0]?.reason ?? '', /No mapping found for \[extra\] in order to sort on/);
        const ok = await client.search({ index: 'logs-1', sort: [{ extra: { order: 'asc', unmapped_type: 'keyword' } }] });
        assert.equal(ok.hits.hits.length, 1);
        const idSort = await rejects(client.search({ index: 'logs-1', sort: ['_id'] }));
        assert.match(errorOf(idSort).root_cause?.[0]?.reason ?? '', /Fielddata access on the _id field is disallowed/);
        const mapping = await client.indices.getMapping({ index: 'logs-1' });
        assert.equal((mapping['logs-1']?.mappings.properties as Record<string, unknown>).extra, undefined);

        const bad = await client.bulk({
          operations: [
            { index: { _index: 'logs-1', _id: '2' } },
            { n: 'twelve' },
            { index: { _index: 'logs-1', _id: '3' } },
            { ip: 'nope' },
            { index: { _index: 'logs-1', _id: '4' } },
            { pivots: 'flat' },
          ],
        });
        assert.equal(bad.errors, true);
        const [n, ip, obj] = bad.items.map((i) => i.index);
        assert.equal(n?.status, 400);
        assert.equal(n?.error?.type, 'document_parsing_exception');
        assert.match(n?.error?.reason ?? '', /failed to parse field \[n\] of type \[long\] in document with id '2'/);
        assert.equal(ip?.error?.type, 'document_parsing_exception');
        assert.match(
          obj?.error?.reason ?? '',
          /object mapping for \[pivots\] tried to parse field \[pivots\] as object, but found a concrete value/,
        );
      }));

    test('external_gte versioning: conflicts worded as Elasticsearch words them', () =>
      withEnv(mode, async ({ fake, client }) => {
        const write = (version: number) =>
          client.bulk({ operations: [{ index: { _index: 'v', _id: 'doc-1', version, version_type: 'external_gte' } }, { version }] });
        const first = await write(5);
        assert.deepEqual(
          [first.items[0]?.index?.status, first.items[0]?.index?.result, first.items[0]?.index?._version],
          [201, 'created', 5],
        );
        const older = (await write(3)).items[0]?.index;
        assert.equal(older?.status, 409);
        assert.equal(older?.error?.type, 'version_conflict_engine_exception');
        assert.equal(older?.error?.reason, '[doc-1]: version conflict, current version [5] is higher than the one provided [3]');
        const same = (await write(5)).items[0]?.index;
        assert.deepEqual([same?.status, same?.result, same?._version], [200, 'updated', 5]);
        await write(7);
        assert.deepEqual(fake.docs('v').get('doc-1'), { source: { version: 7 }, version: 7 });
        const internal = await rejects(client.bulk({ operations: [{ index: { _index: 'v', _id: 'x', version: 2 } }, {}] }));
        assert.equal(errorOf(internal).type, 'action_request_validation_exception');
      }));

    test('require_alias: 404 unless the target is an alias; writes go to the write index', () =>
      withEnv(mode, async ({ fake, client }) => {
        const r = await client.bulk({ operations: [{ index: { _index: 'nope', _id: '1', require_alias: true } }, { a: 1 }] });
        const item = r.items[0]?.index;
        assert.equal(item?.status, 404);
        assert.equal(item?.error?.type, 'index_not_found_exception');
        assert.equal(item?.error?.reason, 'no such index [nope] and [require_alias] request flag is [true] and [nope] is not an alias');
        assert.deepEqual(fake.indices(), []);
        await client.indices.create({ index: 'data-1', aliases: { data: { is_write_index: true } } });
        await client.indices.create({ index: 'data-0' });
        await client.indices.updateAliases({ actions: [{ add: { index: 'data-0', alias: 'data' } }] });
        const concrete = await client.bulk({ operations: [{ index: { _index: 'data-0', _id: '1', require_alias: true } }, { a: 1 }] });
        assert.equal(concrete.items[0]?.index?.status, 404);
        const via = await client.bulk({
          refresh: true,
          operations: [{ index: { _index: 'data', _id: '1', require_alias: true } }, { a: 1 }],
        });
        assert.equal(via.items[0]?.index?._index, 'data-1');
        assert.deepEqual(Object.keys(await client.indices.getAlias({ name: 'data' })).sort(), ['data-0', 'data-1']);
        const single = await rejects(client.get({ index: 'data', id: '1' }));
        assert.match(errorOf(single).reason ?? '', /alias \[data\] has more than one index associated with it \[data-0, data-1\]/);
        assert.equal((await client.search({ index: 'data', query: { ids: { values: ['1'] } } })).hits.hits[0]?._index, 'data-1');
        const missing = await rejects(client.indices.getAlias({ name: 'nope' }));
        assert.equal(missing.statusCode, 404);
        assert.equal(await client.indices.existsAlias({ name: 'nope' }), false);
        const clash = await rejects(client.indices.create({ index: 'x-1', aliases: { 'data-0': {} } }));
        assert.equal(errorOf(clash).type, 'invalid_alias_name_exception');
      }));

    test('update with upsert creates, then deep-merges doc into the stored source', () =>
      withEnv(mode, async ({ fake, client }) => {
        const put = (doc: Record<string, unknown>, createdAt: number) =>
          client.bulk({
            refresh: 'wait_for',
            operations: [{ update: { _index: 'dl', _id: 'e1', retry_on_conflict: 3 } }, { doc, upsert: { ...doc, createdAt } }],
          });
        const first = await put({ stage: 'a', nested: { x: 1 } }, 100);
        assert.deepEqual([first.items[0]?.update?.status, first.items[0]?.update?.result], [201, 'created']);
        const second = await put({ stage: 'b', nested: { y: 2 } }, 200);
        assert.deepEqual(
          [second.items[0]?.update?.status, second.items[0]?.update?.result, second.items[0]?.update?._version],
          [200, 'updated', 2],
        );
        assert.deepEqual(fake.docs('dl').get('e1')?.source, { stage: 'b', nested: { x: 1, y: 2 }, createdAt: 100 });
        assert.equal((await put({ stage: 'b' }, 300)).items[0]?.update?.result, 'noop');
        const del = await client.bulk({ operations: [{ delete: { _index: 'dl', _id: 'e1' } }, { delete: { _index: 'dl', _id: 'e1' } }] });
        assert.deepEqual(
          del.items.map((i) => [i.delete?.status, i.delete?.result]),
          [
            [200, 'deleted'],
            [404, 'not_found'],
          ],
        );
        const missing = await client.bulk({ operations: [{ update: { _index: 'dl', _id: 'zz' } }, { doc: { a: 1 } }] });
        assert.equal(missing.items[0]?.update?.error?.type, 'document_missing_exception');
      }));

    test('search_after pages through a keyword sort; the result window is enforced', () =>
      withEnv(mode, async ({ client }) => {
        await templates(client);
        const all = Array.from({ length: 25 }, (_, i) => `id-${String(i).padStart(2, '0')}`).reverse();
        await client.bulk({
          refresh: true,
          operations: all.flatMap((id) => [{ index: { _index: 'logs-p', _id: id } }, { id, h: id.endsWith('1') ? 'one' : 'other' }]),
        });
        const seen: string[] = [];
        let after: (string | number | null)[] | undefined;
        for (;;) {
          const r = await client.search({
            index: 'logs-p',
            sort: [{ id: 'asc' }],
            size: 10,
            _source: false,
            track_total_hits: false,
            ...(after ? { search_after: after } : {}),
          });
          assert.equal(r.hits.total, undefined);
          seen.push(...r.hits.hits.map((h) => h._id as string));
          if (r.hits.hits.length < 10) break;
          after = r.hits.hits[r.hits.hits.length - 1]?.sort as (string | number | null)[];
        }
        assert.deepEqual(seen, [...all].sort());
        const window = await rejects(client.search({ index: 'logs-p', from: 9995, size: 10 }));
        assert.match(errorOf(window).root_cause?.[0]?.reason ?? '', /Result window is too large/);
        const desc = await client.search({ index: 'logs-p', sort: [{ h: 'desc' }, { id: { order: 'desc', missing: '_first' } }], size: 2 });
        assert.deepEqual(
          desc.hits.hits.map((h) => h.sort),
          [
            ['other', 'id-24'],
            ['other', 'id-23'],
          ],
        );
        assert.equal(desc.hits.hits[0]?._score, null);
      }));

    test('terms aggregation: normalized keys, count-then-key order, size', () =>
      withEnv(mode, async ({ client }) => {
        await templates(client);
        const tags = [['A', 'b'], ['a'], ['B'], ['c', 'C'], ['a']];
        await client.bulk({
          refresh: true,
          operations: tags.flatMap((tag, i) => [{ index: { _index: 'logs-t', _id: String(i) } }, { pivots: { tag } }]),
        });
        const r = await client.search({
          index: 'logs-t',
          size: 0,
          track_total_hits: false,
          aggs: { top: { terms: { field: 'pivots.tag', size: 2, shard_size: 100, order: [{ _count: 'desc' }, { _key: 'asc' }] } } },
        });
        const agg = r.aggregations?.top as { buckets: { key: string; doc_count: number }[]; sum_other_doc_count: number };
        assert.deepEqual(agg.buckets, [
          { key: 'a', doc_count: 3 },
          { key: 'b', doc_count: 2 },
        ]);
        assert.equal(agg.sum_other_doc_count, 1);
        assert.deepEqual(r.hits.hits, []);
        const none = await client.search({ index: 'logs-t', size: 0, aggs: { top: { terms: { field: 'unmapped' } } } });
        assert.deepEqual((none.aggregations?.top as { buckets: unknown[] }).buckets, []);
      }));

    test('searches see refreshed documents only; GET is realtime', () =>
      withEnv(
        mode,
        async ({ fake, client }) => {
          await client.index({ index: 'r', id: '1', document: { a: 'x' } });
          assert.equal((await client.count({ index: 'r' })).count, 0);
          assert.equal((await client.get({ index: 'r', id: '1' })).found, true);
          await client.indices.refresh({ index: 'r' });
          assert.equal((await client.count({ index: 'r' })).count, 1);
          await client.index({ index: 'r', id: '2', document: { a: 'y' } });
          fake.refresh();
          assert.equal(
            (await client.count({ index: 'r', query: { term: { 'a.keyword': 'y' } } })).count,
            1,
            'dynamic mapping: text + keyword',
          );
          await client.bulk({ operations: [{ index: { _index: 'r', _id: '3' } }, { a: 'z' }] });
          assert.equal((await client.count({ index: 'r' })).count, 2);
          const mget = await client.mget({ index: 'r', ids: ['3', 'nope'] });
          assert.deepEqual(
            mget.docs.map((d) => ('found' in d ? d.found : 'error')),
            [true, false],
          );
          const r = await client.deleteByQuery({ index: 'r', query: { match_all: {} }, refresh: true, conflicts: 'proceed' });
          assert.equal(r.deleted, 2, 'delete-by-query works on the last refresh');
          assert.equal((await client.count({ index: 'r' })).count, 1);
          const missing = await rejects(client.count({ index: 'nope' }));
          assert.deepEqual(
            [missing.statusCode, errorOf(missing).type, errorOf(missing).reason],
            [404, 'index_not_found_exception', 'no such index [nope]'],
          );
        },
        { refreshIntervalMs: 0 },
      ));

    test('automatic refresh makes writes searchable after the interval', () =>
      withEnv(
        mode,
        async ({ client }) => {
          await client.index({ index: 'r', id: '1', document: { a: 'x' } });
          await new Promise((r) => setTimeout(r, 120));
          assert.equal((await client.count({ index: 'r' })).count, 1);
        },
        { refreshIntervalMs: 20 },
      ));

    test('injected item and request faults reach the client as real errors', () =>
      withEnv(mode, async ({ fake, client }) => {
        fake.failItems((id) => id === 'b', { status: 429, type: 'es_rejected_execution_exception', reason: 'queue full' });
        const r = await client.bulk({ operations: ['a', 'b', 'c'].flatMap((id) => [{ index: { _index: 'f', _id: id } }, { id }]) });
        assert.deepEqual(
          r.items.map((i) => i.index?.status),
          [201, 429, 201],
        );
        assert.equal(r.items[1]?.index?.error?.type, 'es_rejected_execution_exception');
        assert.deepEqual([...fake.docs('f').keys()].sort(), ['a', 'c']);

        fake.failRequests({ method: 'POST', path: /\/_bulk$/ }, { status: 503 });
        const unavailable = await rejects(client.bulk({ operations: [{ index: { _index: 'f', _id: 'b' } }, {}] }));
        assert.equal(unavailable.statusCode, 503);
        fake.failRequests({ path: /_search/ }, 'connection', 2);
        for (let i = 0; i < 2; i++)
          await assert.rejects(client.search({ index: 'f' }), (err: unknown) => err instanceof errors.ConnectionError);
        assert.equal((await client.search({ index: 'f' })).hits.hits.length >= 0, true);
        const bulks = fake.requests.filter((q) => q.path === '/_bulk');
        assert.equal(bulks.length, 2);
        assert.deepEqual(bulks[0]?.body, [
          { index: { _index: 'f', _id: 'a' } },
          { id: 'a' },
          { index: { _index: 'f', _id: 'b' } },
          { id: 'b' },
          { index: { _index: 'f', _id: 'c' } },
          { id: 'c' },
        ]);
        const gap = await rejects(client.transport.request({ method: 'GET', path: '/_cat/indices' }));
        assert.equal(errorOf(gap).type, 'fake_unsupported_exception');
      }));

    test('the real setup runs twice: the second run creates nothing', () =>
      withEnv(mode, async ({ fake, client }) => {
        const first = await setupElasticsearch(client, { prefix: 't1' });
        assert.deepEqual(first.created.sort(), [
          't1-artefacts',
          't1-batches',
          't1-behaviours-000001',
          't1-collection-objects',
          't1-collections',
          't1-dead-letters',
          't1-locator',
          't1-private-files',
          't1-watch-hits',
          't1-watches',
        ]);
        const second = await setupElasticsearch(client, { prefix: 't1' });
        assert.deepEqual(second.created, []);
        assert.ok(second.applied.some((d) => d.startsWith('mapping upgrade')));
        assert.deepEqual(fake.indices(), [
          't1-artefacts',
          't1-batches',
          't1-behaviours-000001',
          't1-collection-objects',
          't1-collections',
          't1-dead-letters',
          't1-locator',
          't1-private-files',
          't1-watch-hits',
          't1-watches',
        ]);
        const info = await client.info();
        assert.equal(info.version.number, '8.19.0');
      }));

    test('the sink writes, versions and pivots through the alias', () =>
      withEnv(mode, async ({ client }) => {
        await setupElasticsearch(client, { prefix: 't2' });
        const sink = new ElasticsearchSink(client, { prefix: 't2', refresh: 'wait_for' });
        const sha = 'a'.repeat(64);
        const doc = makeDoc(sha, 'Zenbox', 1000, { behash: 'BeHash1', ja3_digests: ['J'.repeat(32)] });
        assert.deepEqual(await sink.upsert(sinkDocs([doc])), [{ id: doc.id, status: 'ok' }]);
        const older = makeDoc(sha, 'Zenbox', 900, { behash: 'other' });
        assert.deepEqual(await sink.upsert(sinkDocs([older])), [{ id: doc.id, status: 'ok', stale: true }]);
        assert.deepEqual(await sink.query('behash', 'BEHASH1'), [doc.id]);
        assert.deepEqual(await sink.query('sha256', sha.toUpperCase()), [doc.id]);
        assert.deepEqual(await sink.get(doc.id), JSON.parse(JSON.stringify(doc)));
        assert.deepEqual(await sink.top('ja3', 5), [{ value: 'j'.repeat(32), count: 1 }]);
        assert.equal(await sink.count(), 1);
      }));
  });
}

test('handle() answers gaps loudly and records requests', () => {
  const fake = new FakeElasticsearch({ refreshIntervalMs: 0 });
  const r = fake.handle({ method: 'GET', path: '/_nodes/stats' });
  assert.equal(r.statusCode, 400);
  assert.match(JSON.stringify(r.body), /fake_unsupported_exception/);
  const bulk = fake.handle({
    method: 'POST',
    path: '/_bulk',
    querystring: 'refresh=true',
    body: '{"index":{"_index":"a","_id":"1"}}\n{"x":1}\n',
  });
  assert.equal(bulk.statusCode, 200);
  assert.deepEqual(fake.requests[1], {
    method: 'POST',
    path: '/_bulk',
    querystring: { refresh: 'true' },
    body: [{ index: { _index: 'a', _id: '1' } }, { x: 1 }],
  });
  assert.equal(fake.handle({ method: 'HEAD', path: '/a' }).statusCode, 200);
  assert.equal(fake.handle({ method: 'HEAD', path: '/b' }).statusCode, 404);
});
