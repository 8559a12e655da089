import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from 'vitest';
import { FakeElasticsearch } from './fakeElasticsearch.js';
import { realCluster, type Reachable } from './realElasticsearch.js';

/**
 * The in-memory fake stays only for what a real node cannot be made to do (a 503 in the middle of
 * a bulk answer, an item-level 429); everything it answers must be what Elasticsearch answers.
 * These requests go to both, and the answers must match once what only a real cluster can know
 * (uuids, seq_no, timings, shard counts) is taken out. Each answer found to differ was a wrong
 * assumption of the fake: the external_gte conflict's wording, numbers in a date range read as
 * milliseconds, the tombstone a versioned delete leaves.
 */
type Step = { method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'HEAD'; path: string; body?: unknown; ndjson?: unknown[] };

const real = await realCluster();
const skip = 'skip' in real ? real.skip : undefined;

/** Keys whose values only a real cluster can know. */
const VOLATILE = new Set([
  'index_uuid',
  'took',
  '_shards',
  '_seq_no',
  '_primary_term',
  'timed_out',
  'shard',
  'max_score',
  '_score',
  'root_cause',
]);

function normalize(v: unknown, index: string): unknown {
  if (typeof v === 'string') return v.split(index).join('<index>');
  if (Array.isArray(v)) return v.map((x) => normalize(x, index));
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([k]) => !VOLATILE.has(k))
        .map(([k, x]) => [k.split(index).join('<index>'), normalize(x, index)]),
    );
  }
  return v;
}

async function send(base: string, s: Step, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  const body = s.ndjson
    ? s.ndjson.map((l) => JSON.stringify(l)).join('\n') + '\n'
    : s.body === undefined
      ? undefined
      : JSON.stringify(s.body);
  const r = await fetch(base + s.path, {
    method: s.method,
    headers: { 'content-type': s.ndjson ? 'application/x-ndjson' : 'application/json', ...headers },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

let n = 0;
describe.skipIf(skip !== undefined)(`the fake answers as a real Elasticsearch node does${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const fake = new FakeElasticsearch();
  let fakeUrl = '';
  const cluster = real as Reachable;
  const auth: Record<string, string> = cluster.auth?.apiKey
    ? { authorization: `ApiKey ${cluster.auth.apiKey}` }
    : cluster.auth?.username
      ? { authorization: `Basic ${Buffer.from(`${cluster.auth.username}:${cluster.auth.password ?? ''}`).toString('base64')}` }
      : {};
  beforeAll(async () => {
    fakeUrl = await fake.listen();
  });
  afterAll(() => fake.close());

  /** Sends the steps to both, in order, on an index of their own; compares every answer. */
  async function same(steps: (index: string) => Step[]): Promise<void> {
    const index = `sandtrail-fake-vs-real-${process.pid}-${n++}`;
    try {
      for (const s of steps(index)) {
        const a = await send(fakeUrl, s, {});
        const b = await send(cluster.url, s, auth);
        assert.deepEqual(
          { status: a.status, body: normalize(a.body, index) },
          { status: b.status, body: normalize(b.body, index) },
          `${s.method} ${s.path.split(index).join('<index>')}: the fake (actual) answers otherwise than Elasticsearch (expected)`,
        );
      }
    } finally {
      await send(cluster.url, { method: 'DELETE', path: `/${index}?ignore_unavailable=true` }, auth);
    }
  }

  const versioned = (index: string, id: string, version: number, op: 'index' | 'delete' = 'index'): Step =>
    op === 'index'
      ? { method: 'PUT', path: `/${index}/_doc/${id}?version=${version}&version_type=external_gte&refresh=true`, body: { n: version } }
      : { method: 'DELETE', path: `/${index}/_doc/${id}?version=${version}&version_type=external_gte&refresh=true` };

  test('external_gte: an older version is refused with the stored and the provided version, an equal one accepted', () =>
    same((i) => [
      { method: 'PUT', path: `/${i}`, body: { settings: { number_of_shards: 1, number_of_replicas: 0 } } },
      versioned(i, 'a', 5),
      versioned(i, 'a', 3),
      versioned(i, 'a', 5),
      versioned(i, 'a', 9),
      {
        method: 'POST',
        path: `/_bulk?refresh=true`,
        ndjson: [
          { index: { _index: i, _id: 'a', version: 4, version_type: 'external_gte' } },
          { n: 4 },
          { index: { _index: i, _id: 'b', version: 4, version_type: 'external_gte' } },
          { n: 4 },
        ],
      },
    ]));

  test('a versioned delete leaves a tombstone that refuses older versions, even of a document that never existed', () =>
    same((i) => [
      { method: 'PUT', path: `/${i}`, body: { settings: { number_of_shards: 1, number_of_replicas: 0 } } },
      versioned(i, 'a', 5),
      versioned(i, 'a', 5, 'delete'),
      versioned(i, 'a', 4),
      versioned(i, 'never', 7, 'delete'),
      versioned(i, 'never', 6),
      versioned(i, 'never', 7),
    ]));

  test('a range on an epoch_second date: a number is milliseconds unless the query names the format, a string takes the field format', () =>
    same((i) => [
      {
        method: 'PUT',
        path: `/${i}`,
        body: {
          settings: { number_of_shards: 1, number_of_replicas: 0 },
          mappings: { properties: { t: { type: 'date', format: 'epoch_second', ignore_malformed: true } } },
        },
      },
      { method: 'PUT', path: `/${i}/_doc/1?refresh=true`, body: { t: 1_800_000_100 } },
      { method: 'PUT', path: `/${i}/_doc/2?refresh=true`, body: { t: 1_800_000_200 } },
      { method: 'POST', path: `/${i}/_count`, body: { query: { range: { t: { gte: 1_800_000_150 } } } } },
      { method: 'POST', path: `/${i}/_count`, body: { query: { range: { t: { gte: '1800000150' } } } } },
      { method: 'POST', path: `/${i}/_count`, body: { query: { range: { t: { gte: 1_800_000_150, format: 'epoch_second' } } } } },
      { method: 'POST', path: `/${i}/_count`, body: { query: { term: { t: 1_800_000_100 } } } },
      { method: 'POST', path: `/${i}/_count`, body: { query: { term: { t: '1800000100' } } } },
    ]));

  test('a delete conditioned on seq_no and primary term: applied when current, 409 once the document changed, 404 once gone', () =>
    same((i) => [
      { method: 'PUT', path: `/${i}`, body: { settings: { number_of_shards: 1, number_of_replicas: 0 } } },
      { method: 'PUT', path: `/${i}/_doc/a?refresh=true`, body: { n: 1 } },
      { method: 'PUT', path: `/${i}/_doc/a?refresh=true`, body: { n: 2 } },
      { method: 'DELETE', path: `/${i}/_doc/a?if_seq_no=0&if_primary_term=1&refresh=true` },
      { method: 'DELETE', path: `/${i}/_doc/a?if_seq_no=1&if_primary_term=1&refresh=true` },
      { method: 'DELETE', path: `/${i}/_doc/a?refresh=true` },
    ]));
});
