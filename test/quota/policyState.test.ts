import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import {
  applyStateChanges,
  chargeOf,
  emptyPolicyState,
  parseOperation,
  type ChargeResult,
  type PolicyState,
} from '../../src/quota/index.js';

const NOW = new Date('2026-11-21T17:05:30Z');
const SHA = 'Ab'.repeat(32); // mixed case on purpose: sha256 matches case-insensitively
const OTHER = 'cd'.repeat(32);

/** Runs ops in order from `state`, returning each result and the final state. */
function run(ops: Record<string, unknown>[], state: PolicyState = emptyPolicyState()): { results: ChargeResult[]; state: PolicyState } {
  const results: ChargeResult[] = [];
  for (const o of ops) {
    const parsed = parseOperation({ user: 'u1', ...o }, NOW);
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
    const r = chargeOf(parsed.op, state);
    results.push(r);
    state = r.state;
  }
  return { results, state };
}

const apiUnits = (r: ChargeResult[]): (number | undefined)[] => r.map((x) => x.charge.units.api_requests);
const livehuntUnits = (r: ChargeResult[]): (number | undefined)[] => r.map((x) => x.charge.units.livehunt);
const upload = { op: 'file_upload', sha256: SHA, known: false, analysis_id: 'An-1' };
const get = (path: string, user = 'u1'): Record<string, unknown> => ({ op: 'api', method: 'GET', path, user });

describe('rule 6 state', () => {
  test('rule 6: the later GETs are free only for the uploader and only for that file, in both forms', () => {
    const { results } = run([
      upload,
      get(`/files/${SHA.toLowerCase()}`),
      get(`/api/v3/files/${SHA.toUpperCase()}`),
      get('/files/analyses/An-1'),
      get('https://www.virustotal.com/api/v3/files/analyses/An-1?relationships=item'),
      get('/files/analyses/an-1'), // analysis ids are matched exactly
      get(`/files/${OTHER}`), // another file
      get('/files/analyses/An-2'), // another analysis
      get(`/files/${SHA}`, 'u2'), // another user, even in the same group
      get('/files/analyses/An-1', 'u2'),
      get(`/files/${SHA}/behaviours`), // another endpoint of the same file
      { op: 'api', method: 'POST', path: `/files/${SHA}/analyse` }, // re-scan: as any call
      get(`/files/${SHA}`), // the grant survives a re-scan
    ]);
    assert.deepEqual(apiUnits(results), [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0]);
    assert.deepEqual(results[11]?.charge.rules, [1, 6]);
  });

  test('rule 6: a known-file upload costs 1 and frees nothing', () => {
    const { results, state } = run([{ ...upload, known: true }, get(`/files/${SHA}`), get('/files/analyses/An-1')]);
    assert.deepEqual(apiUnits(results), [1, 1, 1]);
    assert.deepEqual(results[0]?.stateChanges, []);
    assert.deepEqual(state, emptyPolicyState());
  });

  test('rule 6: an unknown upload records a grant a ledger can persist and replay', () => {
    const { results, state } = run([upload]);
    const changes = results[0]?.stateChanges ?? [];
    assert.deepEqual(changes, [{ kind: 'rule6_grant', user: 'u1', sha256: SHA.toLowerCase(), analysisId: 'An-1' }]);
    assert.deepEqual(applyStateChanges(emptyPolicyState(), changes), state);
    assert.deepEqual(JSON.parse(JSON.stringify(state)), state, 'plain serializable data');
    // uploading the same file with the same analysis again changes nothing; a new analysis does
    assert.deepEqual(run([upload], state).results[0]?.stateChanges, []);
    assert.equal(run([{ ...upload, analysis_id: 'An-2' }], state).results[0]?.stateChanges.length, 1);
  });

  test('rule 6: an unknown upload without analysis_id is malformed', () => {
    const r = parseOperation({ op: 'file_upload', user: 'u1', sha256: SHA, known: false }, NOW);
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.message, /analysis_id.*rule 6/);
  });
});

describe('livehunt choice (rule 10)', () => {
  const rs = (rules: number, active = true, at = '2026-11-05T10:00:00Z', ruleset_id = 'r1'): Record<string, unknown> => ({
    op: 'livehunt_ruleset',
    ruleset_id,
    rules,
    active,
    at,
  });

  test('rule 10: same month charges only rules beyond the most already charged for that ruleset', () => {
    const { results } = run([
      rs(3), // 3
      rs(3), // re-reported: 0
      rs(3, false), // deactivated: 0
      rs(3), // re-activated same month: 0
      rs(5), // grew: 2 more
      rs(2), // shrank: 0, no refund
      rs(5), // back to 5: 0
      rs(4, true, '2026-11-30T23:59:59Z'), // still November: 0
      rs(4, true, '2026-12-01T00:00:00Z'), // a new month charges again: 4
      rs(3, true, '2026-11-20T00:00:00Z', 'r2'), // another ruleset is separate: 3
    ]);
    assert.deepEqual(livehuntUnits(results), [3, 0, 0, 0, 2, 0, 0, 0, 4, 3]);
    assert.deepEqual(results[4]?.stateChanges, [{ kind: 'livehunt_mark', user: 'u1', ruleset: 'r1', month: '2026-11', rules: 5 }]);
    assert.deepEqual(results[5]?.stateChanges, []);
  });

  test('rule 10: marks are per user: the same ruleset id under another user is charged', () => {
    const { state } = run([rs(3)]);
    const other = run([{ ...rs(3), user: 'u2', group: 'g' }], state);
    assert.deepEqual(livehuntUnits(other.results), [3]);
  });

  test('rule 10: a mark never goes down when changes are applied out of order', () => {
    const s = applyStateChanges(emptyPolicyState(), [
      { kind: 'livehunt_mark', user: 'u1', ruleset: 'r1', month: '2026-11', rules: 5 },
      { kind: 'livehunt_mark', user: 'u1', ruleset: 'r1', month: '2026-11', rules: 2 },
    ]);
    assert.deepEqual(s.livehunt, { u1: { r1: { '2026-11': 5 } } });
  });
});

describe('state handling', () => {
  test('chargeOf never mutates its input state', () => {
    const { state } = run([upload, { op: 'livehunt_ruleset', ruleset_id: 'r1', rules: 2, active: true }]);
    const before = JSON.stringify(state);
    const frozen = structuredClone(state);
    run(
      [
        { ...upload, sha256: OTHER, analysis_id: 'x' },
        { op: 'livehunt_ruleset', ruleset_id: 'r1', rules: 9, active: true },
      ],
      state,
    );
    assert.equal(JSON.stringify(state), before);
    assert.deepEqual(state, frozen);
  });

  test('user, ruleset and analysis names that are Object.prototype members stay plain data', () => {
    const { results, state } = run([
      { ...upload, user: '__proto__', analysis_id: 'constructor' },
      get(`/files/${SHA}`, 'constructor'),
      get('/files/analyses/constructor', '__proto__'),
      get('/files/analyses/toString', '__proto__'),
      { op: 'livehunt_ruleset', user: 'toString', ruleset_id: '__proto__', rules: 2, active: true },
      { op: 'livehunt_ruleset', user: 'toString', ruleset_id: '__proto__', rules: 2, active: true },
    ]);
    assert.deepEqual(apiUnits(results.slice(0, 4)), [0, 1, 0, 1]);
    assert.deepEqual(livehuntUnits(results.slice(4)), [2, 0]);
    assert.equal(Object.getPrototypeOf(state.rule6), Object.prototype);
    assert.ok(Object.hasOwn(state.rule6, '__proto__'));
  });
});

describe('parseOperation', () => {
  const bad: [string, unknown, RegExp][] = [
    ['not an object', [1], /must be a JSON object/],
    ['no op', { user: 'u' }, /"op" must be a string/],
    ['unknown op', { op: 'teleport', user: 'u' }, /unknown op "teleport"/],
    ['no user', { op: 'ui_download' }, /"user" is required/],
    ['blank user', { op: 'ui_download', user: '  ' }, /"user" must be a non-empty string/],
    ['numeric group', { op: 'ui_download', user: 'u', group: 7 }, /"group" must be a non-empty string/],
    ['bad at', { op: 'ui_download', user: 'u', at: 'yesterday' }, /"at" must be an ISO-8601/],
    ['impossible day', { op: 'ui_download', user: 'u', at: '2026-02-30T00:00:00Z' }, /"at"/],
    ['ioc_count missing', { op: 'ioc_delta', user: 'u' }, /"ioc_count" is required/],
    ['ioc_count negative', { op: 'ioc_backfill', user: 'u', ioc_count: -1 }, /non-negative integer, got -1/],
    ['ioc_count fraction', { op: 'ioc_delta', user: 'u', ioc_count: 1.5 }, /non-negative integer/],
    ['ioc_count string', { op: 'ioc_delta', user: 'u', ioc_count: '3' }, /non-negative integer/],
    ['rules negative', { op: 'livehunt_ruleset', user: 'u', ruleset_id: 'r', rules: -2, active: true }, /"rules"/],
    ['active missing', { op: 'livehunt_ruleset', user: 'u', ruleset_id: 'r', rules: 2 }, /"active" is required/],
    ['count fraction', { op: 'asm_entity_discovered', user: 'u', count: 0.5 }, /"count"/],
    ['public graph without items', { op: 'graph_create', user: 'u', visibility: 'public' }, /"items" is required/],
    ['private graph bad items', { op: 'graph_create', user: 'u', visibility: 'private', items: -1 }, /"items"/],
    ['bad visibility', { op: 'graph_create', user: 'u', visibility: 'secret' }, /"visibility" must be one of/],
    ['bad search kind', { op: 'ui_search', user: 'u', kind: 'browse' }, /"kind" must be one of "ioc", "pivot", "page"/],
    ['bad sha', { op: 'file_upload', user: 'u', sha256: 'abc', known: false, analysis_id: 'a' }, /64 hex/],
    ['known missing', { op: 'file_upload', user: 'u', sha256: SHA }, /"known" is required/],
    ['no method', { op: 'api', user: 'u', path: '/files/x' }, /"method" is required/],
    ['no path', { op: 'api', user: 'u', method: 'GET' }, /"path" is required/],
    [
      'bad invalid_id',
      { op: 'api', user: 'u', method: 'GET', path: '/analyses/x', invalid_id: 'yes' },
      /"invalid_id" must be true or false/,
    ],
  ];
  for (const [name, value, message] of bad) {
    test(`refuses ${name}`, () => {
      const r = parseOperation(value, NOW);
      assert.equal(r.ok, false);
      assert.match(r.ok ? '' : r.message, message);
    });
  }

  test('fills in defaults and normalizes', () => {
    const r = parseOperation({ op: 'api', user: 'u', group: null, method: 'get', path: '/files/x', extra: 1 }, NOW);
    assert.ok(r.ok);
    assert.deepEqual(r.op, { op: 'api', user: 'u', method: 'GET', path: '/files/x', at: NOW });
    const up = parseOperation({ op: 'file_upload', user: 'u', sha256: SHA, known: false, analysis_id: 'a' }, NOW);
    assert.ok(up.ok && up.op.op === 'file_upload' && up.op.sha256 === SHA.toLowerCase());
  });

  test('reads at as UTC, with or without an offset', () => {
    const at = (s: string): string | undefined => {
      const r = parseOperation({ op: 'ui_download', user: 'u', at: s }, NOW);
      return r.ok ? r.op.at.toISOString() : undefined;
    };
    assert.equal(at('2026-11-21T17:05:00Z'), '2026-11-21T17:05:00.000Z');
    assert.equal(at('2026-11-21T17:05:00'), '2026-11-21T17:05:00.000Z'); // no offset: UTC, not local time
    assert.equal(at('2026-11-21T18:05:00.250+01:00'), '2026-11-21T17:05:00.250Z');
    assert.equal(at('2026-11-21'), '2026-11-21T00:00:00.000Z');
    assert.equal(at('2026-11-21T17:05:60Z'), undefined);
  });
});
