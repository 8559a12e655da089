import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'vitest';
import { errors, type Client } from '@elastic/elasticsearch';
import { FakeElasticsearch, mockedClient } from './fakeElasticsearch.js';

let fake: FakeElasticsearch;
let client: Client;

beforeEach(async () => {
  fake = new FakeElasticsearch({ refreshIntervalMs: 0 });
  client = mockedClient(fake);
  await client.indices.create({
    index: 'a',
    settings: { analysis: { normalizer: { lc: { type: 'custom', char_filter: [], filter: ['lowercase'] } } } },
    mappings: {
      dynamic: false,
      properties: {
        id: { type: 'keyword' },
        tag: { type: 'keyword', normalizer: 'lc' },
        box: { type: 'keyword' },
        sha: { type: 'keyword' },
        d: { type: 'date', format: 'epoch_second' },
        n: { type: 'long' },
      },
    },
  });
  const docs = [
    { id: '1', tag: ['X', 'y'], box: 'A', sha: 's1', d: 100, n: 5 },
    { id: '2', tag: ['x'], box: 'B', sha: 's1', d: 300, n: 1 },
    { id: '3', tag: ['y'], box: 'A', sha: 's2', d: 200 },
    { id: '4', tag: ['z'], box: 'A', sha: 's3' },
  ];
  await client.bulk({ refresh: true, operations: docs.flatMap((d) => [{ index: { _index: 'a', _id: d.id } }, d]) });
});

afterEach(async () => {
  await client.close();
  await fake.close();
});

async function rejects(p: Promise<unknown>): Promise<{ status?: number; type?: string; reason?: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof errors.ResponseError);
    const e = (err.body as { error: { type: string; reason: string } }).error;
    return { status: err.statusCode, type: e.type, reason: e.reason };
  }
  assert.fail('expected the request to fail');
}

describe('fake Elasticsearch aggregations', () => {
  test('terms with sub-aggregations: each bucket aggregates its own documents', async () => {
    const r = await client.search({
      index: 'a',
      size: 0,
      aggs: {
        tags: {
          terms: { field: 'tag', order: [{ _count: 'desc' }, { _key: 'asc' }] },
          aggs: {
            files: { cardinality: { field: 'sha', precision_threshold: 40000 } },
            boxes: { terms: { field: 'box' } },
            first: { min: { field: 'd' } },
            last: { max: { field: 'd' } },
          },
        },
      },
    });
    assert.deepEqual(r.aggregations?.tags, {
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: 0,
      buckets: [
        {
          key: 'x',
          doc_count: 2,
          files: { value: 1 },
          boxes: { doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: [{ key: 'A', doc_count: 1 }, { key: 'B', doc_count: 1 }] },
          first: { value: 100_000, value_as_string: '100' },
          last: { value: 300_000, value_as_string: '300' },
        },
        {
          key: 'y',
          doc_count: 2,
          files: { value: 2 },
          boxes: { doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: [{ key: 'A', doc_count: 2 }] },
          first: { value: 100_000, value_as_string: '100' },
          last: { value: 200_000, value_as_string: '200' },
        },
        {
          key: 'z',
          doc_count: 1,
          files: { value: 1 },
          boxes: { doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: [{ key: 'A', doc_count: 1 }] },
          // no value: null, and no value_as_string
          first: { value: null },
          last: { value: null },
        },
      ],
    }); // prettier-ignore
  });

  test('filters (keyed and anonymous), metrics over the matching documents only, typed keys', async () => {
    const r = await client.search({
      index: 'a',
      size: 0,
      query: { bool: { must_not: [{ ids: { values: ['4'] } }] } },
      aggs: {
        keyed: { filters: { filters: { y: { term: { tag: 'Y' } }, a: { term: { box: 'A' } } } }, aggs: { n: { max: { field: 'n' } } } },
        list: { filters: { filters: [{ term: { tag: 'x' } }, { term: { tag: 'nothing' } }] } },
        files: { cardinality: { field: 'sha' } },
        low: { min: { field: 'n' } },
      },
    });
    assert.deepEqual(r.aggregations, {
      keyed: { buckets: { a: { doc_count: 2, n: { value: 5 } }, y: { doc_count: 2, n: { value: 5 } } } },
      list: { buckets: [{ doc_count: 2 }, { doc_count: 0 }] },
      files: { value: 2 },
      low: { value: 1 },
    });
    const typed = await client.search({
      index: 'a',
      size: 0,
      typed_keys: true,
      aggs: { f: { cardinality: { field: 'sha' } }, m: { max: { field: 'd' } } },
    });
    assert.deepEqual(Object.keys(typed.aggregations ?? {}).sort(), ['cardinality#f', 'max#m']);
  });

  test('what Elasticsearch refuses, the fake refuses', async () => {
    assert.deepEqual(await rejects(client.search({ index: 'a', size: 0, aggs: { m: { min: { field: 'box' } } } })), {
      status: 400,
      type: 'illegal_argument_exception',
      reason: 'Field [box] of type [keyword] is not supported for aggregation [min]',
    });
    const sub = await rejects(
      client.search({ index: 'a', size: 0, aggs: { c: { cardinality: { field: 'sha' }, aggs: { m: { max: { field: 'n' } } } } } }),
    );
    assert.equal(sub.type, 'aggregation_initialization_exception');
    assert.equal(
      (await rejects(client.search({ index: 'a', size: 0, aggs: { p: { percentiles: { field: 'n' } } } }))).type,
      'fake_unsupported_exception',
    );
  });

  test('bool should of constant scores: the score counts the clauses matched, and sorts', async () => {
    const r = await client.search({
      index: 'a',
      query: {
        bool: {
          should: [
            { constant_score: { filter: { term: { tag: 'x' } }, boost: 1 } },
            { constant_score: { filter: { term: { tag: 'y' } }, boost: 1 } },
            { constant_score: { filter: { term: { box: 'A' } }, boost: 1 } },
          ],
          minimum_should_match: 1,
        },
      },
      sort: [{ _score: { order: 'desc' } }, { d: { order: 'desc', missing: '_last' } }, { id: { order: 'asc' } }],
    });
    assert.deepEqual(
      r.hits.hits.map((h) => [h._id, h._score]),
      [
        ['1', 3],
        ['3', 2],
        ['2', 1],
        ['4', 1],
      ],
    );
  });
});
