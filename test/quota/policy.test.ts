import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import {
  accountsOf,
  chargeOf,
  emptyPolicyState,
  parseInstant,
  parseOperation,
  replayOperations,
  type Charge,
  type PolicyState,
  type QuotaKind,
} from '../../src/quota/index.js';
import { runCli } from '../support/cli.js';

const NOW = new Date('2026-11-21T17:05:30Z');
const SHA = 'ab'.repeat(32);

/** Parses `input` (user u1 unless given) and prices it against `state`. */
function price(input: Record<string, unknown>, state: PolicyState = emptyPolicyState()): Charge {
  const parsed = parseOperation({ user: 'u1', ...input }, NOW);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
  return chargeOf(parsed.op, state).charge;
}

/** State after an unknown upload of SHA (analysis an-1) by u1. */
function uploaded(): PolicyState {
  const parsed = parseOperation({ op: 'file_upload', user: 'u1', sha256: SHA, known: false, analysis_id: 'an-1' }, NOW);
  assert.ok(parsed.ok);
  return chargeOf(parsed.op, emptyPolicyState()).state;
}

interface Case {
  name: string;
  op: Record<string, unknown>;
  units: Partial<Record<QuotaKind, number>>;
  rules: number[];
  state?: () => PolicyState;
}

function table(cases: Case[]): void {
  for (const c of cases) {
    const charge = price(c.op, c.state?.());
    assert.deepEqual(charge.units, c.units, `${c.name}: units`);
    assert.deepEqual(charge.rules, c.rules, `${c.name}: rules`);
    assert.match(charge.reason, new RegExp(`rule ${c.rules[0]}\\b`), `${c.name}: reason cites the rule`);
  }
}

const api = (method: string, path: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  op: 'api',
  method,
  path,
  ...extra,
});

describe('quota rules', () => {
  test('rule 1: an ordinary API request costs 1 API unit, however the path is written', () => {
    table([
      { name: 'relative', op: api('GET', '/files/abc'), units: { api_requests: 1 }, rules: [1] },
      { name: 'prefixed', op: api('GET', '/api/v3/files/abc'), units: { api_requests: 1 }, rules: [1] },
      {
        name: 'full URL + query',
        op: api('get', 'https://www.virustotal.com/api/v3/search?query=x'),
        units: { api_requests: 1 },
        rules: [1],
      },
      { name: 'API search', op: api('GET', '/intelligence/search?query=foo'), units: { api_requests: 1 }, rules: [1] },
      { name: 'livehunt API', op: api('POST', '/intelligence/hunting_rulesets'), units: { api_requests: 1 }, rules: [1] },
      { name: 'no leading slash', op: api('GET', 'urls/xyz'), units: { api_requests: 1 }, rules: [1] },
      { name: 'known upload', op: { op: 'file_upload', sha256: SHA, known: true }, units: { api_requests: 1 }, rules: [1] },
      { name: '/feeds-like but not feeds', op: api('GET', '/feedsx/file_behaviours/202611211700'), units: { api_requests: 1 }, rules: [1] },
      // dot segments resolved as the server does: these address /files/abc, not a feed
      { name: 'feeds/..', op: api('GET', '/feeds/../files/abc'), units: { api_requests: 1 }, rules: [1] },
      { name: 'feeds/%2e%2e', op: api('GET', '/api/v3/feeds/%2e%2e/files/abc'), units: { api_requests: 1 }, rules: [1] },
      {
        name: 'feeds/./..',
        op: api('GET', 'https://www.virustotal.com/api/v3/feeds/./%2E%2E/files/abc'),
        units: { api_requests: 1 },
        rules: [1],
      },
    ]);
    // a path climbing above the root addresses nothing: refused, not priced
    const above = parseOperation({ user: 'u1', ...api('GET', '/../../files/abc') }, NOW);
    assert.equal(above.ok, false);
  });

  test('rule 2: overall_quotas and api_usage cost nothing', () => {
    table([
      { name: 'overall_quotas', op: api('GET', '/users/alice/overall_quotas'), units: { api_requests: 0 }, rules: [2] },
      {
        name: 'api_usage + query',
        op: api('GET', '/api/v3/users/alice/api_usage?start_date=20261101'),
        units: { api_requests: 0 },
        rules: [2],
      },
      {
        name: 'full URL',
        op: api('GET', 'https://www.virustotal.com/api/v3/users/a%40b/overall_quotas'),
        units: { api_requests: 0 },
        rules: [2],
      },
      { name: 'other user endpoint', op: api('GET', '/users/alice'), units: { api_requests: 1 }, rules: [1] },
    ]);
  });

  test('rule 3: feed endpoints and their download links cost nothing', () => {
    table([
      { name: 'minute batch', op: api('GET', '/feeds/file_behaviours/202611211700'), units: { api_requests: 0 }, rules: [3] },
      { name: 'hourly', op: api('GET', '/api/v3/feeds/file-behaviours/hourly/2026112117'), units: { api_requests: 0 }, rules: [3] },
      {
        name: 'artefact link',
        op: api('GET', 'https://www.virustotal.com/api/v3/feeds/file_behaviours/tok123/pcap'),
        units: { api_requests: 0 },
        rules: [3],
      },
      { name: 'any path under /feeds/', op: api('GET', '/feeds/files/202611211700'), units: { api_requests: 0 }, rules: [3] },
      {
        name: 'a dot segment inside /feeds/',
        op: api('GET', '/feeds/x/../file_behaviours/202611211700'),
        units: { api_requests: 0 },
        rules: [3],
      },
    ]);
  });

  test('rule 4: IoC delta/backfill cost 1 unless they return zero IoCs', () => {
    table([
      { name: 'delta 0', op: { op: 'ioc_delta', ioc_count: 0 }, units: { api_requests: 0 }, rules: [4] },
      { name: 'delta 1', op: { op: 'ioc_delta', ioc_count: 1 }, units: { api_requests: 1 }, rules: [4] },
      { name: 'delta many', op: { op: 'ioc_delta', ioc_count: 5000 }, units: { api_requests: 1 }, rules: [4] },
      { name: 'backfill 0', op: { op: 'ioc_backfill', ioc_count: 0 }, units: { api_requests: 0 }, rules: [4] },
      { name: 'backfill 7', op: { op: 'ioc_backfill', ioc_count: 7 }, units: { api_requests: 1 }, rules: [4] },
    ]);
  });

  test('rule 5: GET /analyses/{id} with an invalid id costs nothing', () => {
    table([
      { name: 'invalid', op: api('GET', '/analyses/bogus', { invalid_id: true }), units: { api_requests: 0 }, rules: [5] },
      { name: 'prefixed invalid', op: api('GET', '/api/v3/analyses/bogus', { invalid_id: true }), units: { api_requests: 0 }, rules: [5] },
      { name: 'valid', op: api('GET', '/analyses/an-1', { invalid_id: false }), units: { api_requests: 1 }, rules: [1] },
      { name: 'flag absent', op: api('GET', '/analyses/an-1'), units: { api_requests: 1 }, rules: [1] },
      // the choice: invalid_id only waives GET /analyses/{id}, not other calls
      { name: 'flag on another path', op: api('GET', '/files/bogus', { invalid_id: true }), units: { api_requests: 1 }, rules: [1] },
      { name: 'flag on a POST', op: api('POST', '/analyses/bogus', { invalid_id: true }), units: { api_requests: 1 }, rules: [1] },
    ]);
  });

  test('rule 6: unknown upload and its later GETs are free; re-scan costs 1', () => {
    table([
      {
        name: 'unknown upload',
        op: { op: 'file_upload', sha256: SHA, known: false, analysis_id: 'an-1' },
        units: { api_requests: 0 },
        rules: [6],
      },
      { name: 'GET file', op: api('GET', `/files/${SHA}`), units: { api_requests: 0 }, rules: [6], state: uploaded },
      { name: 'GET analysis', op: api('GET', '/files/analyses/an-1'), units: { api_requests: 0 }, rules: [6], state: uploaded },
      { name: 're-scan', op: api('POST', `/files/${SHA}/analyse`), units: { api_requests: 1 }, rules: [1, 6], state: uploaded },
      { name: 'GET without upload', op: api('GET', `/files/${SHA}`), units: { api_requests: 1 }, rules: [1] },
    ]);
  });

  test('rule 7: ASM API endpoints cost no API quota', () => {
    table([
      { name: 'asm_api op', op: { op: 'asm_api' }, units: { api_requests: 0 }, rules: [7] },
      { name: '/asm/ path', op: api('GET', '/asm/projects'), units: { api_requests: 0 }, rules: [7] },
      {
        name: 'prefixed /asm/ path',
        op: api('POST', 'https://www.virustotal.com/api/v3/asm/entities?x=1'),
        units: { api_requests: 0 },
        rules: [7],
      },
    ]);
  });

  test('rule 8: every unit counts for the user and for the group', () => {
    assert.deepEqual(accountsOf({ user: 'u1', group: 'g' }), [
      { scope: 'user', id: 'u1' },
      { scope: 'group', id: 'g' },
    ]);
    assert.deepEqual(accountsOf({ user: 'u1' }), [{ scope: 'user', id: 'u1' }]);
    const ops = [
      { user: 'alice', group: 'soc', op: 'api', method: 'GET', path: '/files/x' },
      { user: 'alice', group: 'soc', op: 'api', method: 'GET', path: '/files/y' },
      { user: 'bob', group: 'soc', op: 'api', method: 'GET', path: '/urls/z' },
      { user: 'bob', group: 'soc', op: 'ui_search', kind: 'pivot' },
      { user: 'carol', group: 'ir', op: 'retrohunt_job' },
      { user: 'dave', op: 'api', method: 'GET', path: '/files/x' }, // no group: user only
      { user: 'erin', group: 'soc', op: 'api', method: 'GET', path: '/feeds/file_behaviours/202611211700' }, // 0: nothing
    ];
    const { consumption, errors } = replayOperations(
      ops.map((o) => JSON.stringify(o)),
      NOW,
    );
    assert.deepEqual(errors, []);
    assert.deepEqual(consumption, {
      users: { alice: { api_requests: 2 }, bob: { api_requests: 1, searches: 1 }, carol: { retrohunt: 1 }, dave: { api_requests: 1 } },
      groups: { ir: { retrohunt: 1 }, soc: { api_requests: 3, searches: 1 } },
    });
  });

  test('rule 9: UI searches and downloads', () => {
    table([
      { name: 'IoC search', op: { op: 'ui_search', kind: 'ioc' }, units: { searches: 1 }, rules: [9] },
      { name: 'pivot', op: { op: 'ui_search', kind: 'pivot' }, units: { searches: 1 }, rules: [9] },
      { name: 'paging', op: { op: 'ui_search', kind: 'page' }, units: { searches: 1 }, rules: [9] },
      { name: 'download', op: { op: 'ui_download' }, units: { downloads: 1 }, rules: [9] },
    ]);
  });

  test('rule 10: each active rule costs 1, inactive rulesets nothing', () => {
    table([
      { name: '3 active', op: { op: 'livehunt_ruleset', ruleset_id: 'r1', rules: 3, active: true }, units: { livehunt: 3 }, rules: [10] },
      {
        name: '3 inactive',
        op: { op: 'livehunt_ruleset', ruleset_id: 'r1', rules: 3, active: false },
        units: { livehunt: 0 },
        rules: [10],
      },
      {
        name: 'empty active',
        op: { op: 'livehunt_ruleset', ruleset_id: 'r1', rules: 0, active: true },
        units: { livehunt: 0 },
        rules: [10],
      },
    ]);
  });

  test('rule 11: each Retrohunt job costs 1 whatever its outcome', () => {
    // outcome fields a producer adds are ignored
    table([
      { name: 'job', op: { op: 'retrohunt_job' }, units: { retrohunt: 1 }, rules: [11] },
      { name: 'failed job', op: { op: 'retrohunt_job', status: 'failed', matches: 0 }, units: { retrohunt: 1 }, rules: [11] },
    ]);
  });

  test('rule 12: each diff session costs 1', () => {
    table([{ name: 'session', op: { op: 'diff_session' }, units: { diff_sessions: 1 }, rules: [12] }]);
  });

  test('rule 13: private scanning of files and URLs', () => {
    table([
      { name: 'file', op: { op: 'private_scan_file' }, units: { private_scanning_files: 1 }, rules: [13] },
      { name: 'url', op: { op: 'private_scan_url' }, units: { private_scanning_urls: 1 }, rules: [13] },
    ]);
  });

  test('rule 14: each discovered ASM entity costs 1', () => {
    table([
      { name: 'one', op: { op: 'asm_entity_discovered', count: 1 }, units: { asm_entities: 1 }, rules: [14] },
      { name: 'many', op: { op: 'asm_entity_discovered', count: 42 }, units: { asm_entities: 42 }, rules: [14] },
      { name: 'none', op: { op: 'asm_entity_discovered', count: 0 }, units: { asm_entities: 0 }, rules: [14] },
    ]);
  });

  test('rule 15: private graphs cost 1 private graph only; public graphs cost API requests per item', () => {
    table([
      { name: 'private', op: { op: 'graph_create', visibility: 'private' }, units: { private_graphs: 1 }, rules: [15] },
      {
        name: 'private with items',
        op: { op: 'graph_create', visibility: 'private', items: 9 },
        units: { private_graphs: 1 },
        rules: [15],
      },
      { name: 'public', op: { op: 'graph_create', visibility: 'public', items: 12 }, units: { api_requests: 12 }, rules: [15] },
      { name: 'empty public', op: { op: 'graph_create', visibility: 'public', items: 0 }, units: { api_requests: 0 }, rules: [15] },
    ]);
  });
});

test('times are read strictly and in UTC, the years 0 to 99 as themselves; ledger --at reads them so', async () => {
  assert.equal(parseInstant('0050-01-15')?.getUTCFullYear(), 50);
  assert.equal(parseInstant('0050-01-15T10:00Z')?.toISOString(), '0050-01-15T10:00:00.000Z');
  for (const bad of ['1', '2026-02-30', '2026-13-01', 'yesterday']) assert.equal(parseInstant(bad), null, bad);
  assert.equal(parseInstant('2026-11-27T23:30')?.toISOString(), '2026-11-27T23:30:00.000Z');
  for (const bad of ['1', '2026-02-30']) {
    const r = await runCli(['ledger', '--at', bad], { env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /--at must be an ISO-8601 UTC time/);
  }
});
