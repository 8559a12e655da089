import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import {
  accountsOf,
  chargeOf,
  emptyPolicyState,
  parseOperation,
  periodBuckets,
  QUOTA_KINDS,
  replayOperations,
  type QuotaKind,
} from '../../src/quota/index.js';

const NOW = new Date('2026-12-01T12:00:00Z');
const line = (o: Record<string, unknown>): string => JSON.stringify(o);

describe('period buckets', () => {
  test('API requests land in minute, day and month buckets; every other kind in the month only', () => {
    const at = new Date('2026-11-21T17:05:59.999Z');
    assert.deepEqual(periodBuckets('api_requests', at), [
      { period: 'minute', bucket: '2026-11-21T17:05' },
      { period: 'day', bucket: '2026-11-21' },
      { period: 'month', bucket: '2026-11' },
    ]);
    for (const kind of QUOTA_KINDS.filter((k) => k !== 'api_requests')) {
      assert.deepEqual(periodBuckets(kind, at), [{ period: 'month', bucket: '2026-11' }], kind);
    }
  });

  test('boundaries are UTC: the minute turns at :00, the day at 00:00Z, the month on the 1st', () => {
    const b = (iso: string): string[] => periodBuckets('api_requests', new Date(iso)).map((x) => x.bucket);
    assert.deepEqual(b('2026-11-21T17:05:59.999Z'), ['2026-11-21T17:05', '2026-11-21', '2026-11']);
    assert.deepEqual(b('2026-11-21T17:06:00.000Z'), ['2026-11-21T17:06', '2026-11-21', '2026-11']);
    assert.deepEqual(b('2026-11-21T23:59:59Z'), ['2026-11-21T23:59', '2026-11-21', '2026-11']);
    assert.deepEqual(b('2026-11-22T00:00:00Z'), ['2026-11-22T00:00', '2026-11-22', '2026-11']);
    assert.deepEqual(b('2026-11-30T23:59:59Z'), ['2026-11-30T23:59', '2026-11-30', '2026-11']);
    assert.deepEqual(b('2026-12-01T00:00:00Z'), ['2026-12-01T00:00', '2026-12-01', '2026-12']);
    assert.deepEqual(b('2026-12-31T23:59:59Z'), ['2026-12-31T23:59', '2026-12-31', '2026-12']);
    assert.deepEqual(b('2027-01-01T00:00:00Z'), ['2027-01-01T00:00', '2027-01-01', '2027-01']);
    // an offset is folded into UTC: 01:30+02:00 is still the previous UTC day
    assert.deepEqual(b('2026-12-01T01:30:00+02:00'), ['2026-11-30T23:30', '2026-11-30', '2026-11']);
    assert.throws(() => periodBuckets('searches', new Date('nope')), RangeError);
  });

  test('ops replayed at 23:59:59 and 00:00:00 fall in different day and month buckets', () => {
    const lines = [
      line({ op: 'api', user: 'u1', group: 'g', method: 'GET', path: '/files/a', at: '2026-11-30T23:59:59Z' }),
      line({ op: 'api', user: 'u1', group: 'g', method: 'GET', path: '/files/b', at: '2026-11-30T23:59:59.999Z' }),
      line({ op: 'api', user: 'u1', group: 'g', method: 'GET', path: '/files/c', at: '2026-12-01T00:00:00Z' }),
      line({ op: 'ui_search', user: 'u1', group: 'g', kind: 'ioc', at: '2026-11-30T23:59:59Z' }),
      line({ op: 'ui_search', user: 'u1', group: 'g', kind: 'ioc', at: '2026-12-01T00:00:00Z' }),
    ];
    // what a ledger does with each line: price it, then add the units to each account's buckets
    const buckets = new Map<string, number>();
    let state = emptyPolicyState();
    for (const l of lines) {
      const parsed = parseOperation(JSON.parse(l), NOW);
      assert.ok(parsed.ok);
      const r = chargeOf(parsed.op, state);
      state = r.state;
      for (const a of accountsOf(parsed.op)) {
        for (const [kind, n] of Object.entries(r.charge.units) as [QuotaKind, number][]) {
          for (const p of periodBuckets(kind, parsed.op.at)) {
            const key = `${a.scope}:${a.id}:${kind}:${p.bucket}`;
            buckets.set(key, (buckets.get(key) ?? 0) + n);
          }
        }
      }
    }
    for (const scope of ['user:u1', 'group:g']) {
      assert.equal(buckets.get(`${scope}:api_requests:2026-11-30T23:59`), 2);
      assert.equal(buckets.get(`${scope}:api_requests:2026-11-30`), 2);
      assert.equal(buckets.get(`${scope}:api_requests:2026-11`), 2);
      assert.equal(buckets.get(`${scope}:api_requests:2026-12-01T00:00`), 1);
      assert.equal(buckets.get(`${scope}:api_requests:2026-12-01`), 1);
      assert.equal(buckets.get(`${scope}:api_requests:2026-12`), 1);
      assert.equal(buckets.get(`${scope}:searches:2026-11`), 1);
      assert.equal(buckets.get(`${scope}:searches:2026-12`), 1);
      assert.equal(buckets.get(`${scope}:searches:2026-11-30`), undefined, 'searches have no day bucket');
    }
    assert.deepEqual(replayOperations(lines, NOW).consumption, {
      users: { u1: { api_requests: 3, searches: 2 } },
      groups: { g: { api_requests: 3, searches: 2 } },
    });
  });

  test('replay: a livehunt ruleset is charged again when the month turns at 00:00:00 on the 1st', () => {
    const rs = (at: string): string =>
      line({ op: 'livehunt_ruleset', user: 'u1', group: 'g', ruleset_id: 'r', rules: 3, active: true, at });
    const { consumption } = replayOperations([rs('2026-11-30T23:59:59Z'), rs('2026-11-30T23:59:59Z'), rs('2026-12-01T00:00:00Z')], NOW);
    assert.deepEqual(consumption, { users: { u1: { livehunt: 6 } }, groups: { g: { livehunt: 6 } } });
  });
});

describe('replayOperations', () => {
  test('malformed lines are reported with 1-based numbers and messages; the rest still count', () => {
    const lines = [
      line({ op: 'api', user: 'u1', method: 'GET', path: '/files/a' }), // 1
      '', // 2: blank, skipped
      '{not json', // 3
      line({ op: 'ioc_delta', user: 'u1' }), // 4: ioc_count missing
      '   ', // 5: blank
      line({ op: 'frobnicate', user: 'u1' }), // 6: unknown op
      line({ op: 'asm_entity_discovered', user: 'u1', count: -3 }), // 7: negative
      line({ op: 'ui_download', user: 'u1', group: 'g' }), // 8
      '[1,2]', // 9
      line({ op: 'ioc_backfill', user: 'u1', ioc_count: 2.5 }), // 10: fraction
      line({ op: 'ioc_backfill', user: 'u1', ioc_count: 2 }) + '\r', // 11: CRLF tolerated
    ];
    const { consumption, errors } = replayOperations(lines, NOW);
    assert.deepEqual(
      errors.map((e) => e.line),
      [3, 4, 6, 7, 9, 10],
    );
    assert.match(errors[0]?.message ?? '', /^not JSON: /);
    assert.match(errors[1]?.message ?? '', /op "ioc_delta": "ioc_count" is required/);
    assert.match(errors[2]?.message ?? '', /unknown op "frobnicate"/);
    assert.match(errors[3]?.message ?? '', /"count" must be a non-negative integer, got -3/);
    assert.match(errors[4]?.message ?? '', /must be a JSON object/);
    assert.match(errors[5]?.message ?? '', /"ioc_count" must be a non-negative integer, got 2\.5/);
    assert.deepEqual(consumption, { users: { u1: { api_requests: 2, downloads: 1 } }, groups: { g: { downloads: 1 } } });
  });

  test('output is exactly {users, groups}: zero kinds omitted, accounts with nothing omitted', () => {
    const lines = [
      line({ op: 'api', user: 'feeder', group: 'g0', method: 'GET', path: '/feeds/file_behaviours/202611211700' }),
      line({ op: 'api', user: 'feeder', group: 'g0', method: 'GET', path: '/users/feeder/overall_quotas' }),
      line({ op: 'ioc_delta', user: 'feeder', ioc_count: 0 }),
      line({ op: 'livehunt_ruleset', user: 'hunter', group: 'g1', ruleset_id: 'r', rules: 4, active: false }),
      line({ op: 'private_scan_url', user: 'hunter', group: 'g1' }),
      line({ op: 'graph_create', user: 'hunter', visibility: 'private' }),
    ];
    const result = replayOperations(lines, NOW);
    assert.deepEqual(Object.keys(result).sort(), ['consumption', 'errors']);
    assert.deepEqual(Object.keys(result.consumption).sort(), ['groups', 'users']);
    assert.deepEqual(result.consumption, {
      users: { hunter: { private_scanning_urls: 1, private_graphs: 1 } },
      groups: { g1: { private_scanning_urls: 1 } },
    });
    assert.deepEqual(replayOperations([], NOW), { consumption: { users: {}, groups: {} }, errors: [] });
    assert.deepEqual(replayOperations(['', '  '], NOW), { consumption: { users: {}, groups: {} }, errors: [] });
  });

  test('lines are applied in order: rule 6 frees only GETs after the upload; a bad line grants nothing', () => {
    const sha = 'ef'.repeat(32);
    const get = line({ op: 'api', user: 'u1', method: 'GET', path: `/files/${sha}` });
    const up = { op: 'file_upload', user: 'u1', sha256: sha, known: false, analysis_id: 'a1' };
    assert.deepEqual(replayOperations([get, line(up), get, get], NOW).consumption.users, { u1: { api_requests: 1 } });
    const { consumption, errors } = replayOperations([line({ ...up, at: 'bad' }), get], NOW);
    assert.equal(errors.length, 1);
    assert.deepEqual(consumption.users, { u1: { api_requests: 1 } });
  });

  test('operations without at use now', () => {
    const rs = { op: 'livehunt_ruleset', user: 'u1', ruleset_id: 'r', rules: 2, active: true };
    // same month as NOW: no second charge; a line dated last month charges on its own
    const { consumption } = replayOperations(
      [line(rs), line({ ...rs, at: '2026-12-15T00:00:00Z' }), line({ ...rs, at: '2026-11-15T00:00:00Z' })],
      NOW,
    );
    assert.deepEqual(consumption.users, { u1: { livehunt: 4 } });
  });

  test('accepts any iterable of lines, e.g. a generator', () => {
    function* gen(): Generator<string> {
      for (let i = 0; i < 1000; i++)
        yield line({ op: 'file_upload', user: `u${i % 3}`, sha256: i.toString(16).padStart(64, '0'), known: false, analysis_id: `a${i}` });
      yield line({ op: 'api', user: 'u0', method: 'GET', path: `/files/${'0'.repeat(64)}` });
    }
    assert.deepEqual(replayOperations(gen(), NOW), { consumption: { users: {}, groups: {} }, errors: [] });
  });
});
