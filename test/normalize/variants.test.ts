/**
 * Every upstream variant (DESIGN.md §3, spec notes) folds into one canonical form. Each case
 * gives a small hand-written input and the exact canonical attributes and warning codes.
 */
import { describe, test } from 'vitest';
import assert from 'node:assert/strict';
import { canon } from './helpers.js';

interface Case {
  name: string;
  input: Record<string, unknown>;
  expected: Record<string, unknown>;
  codes?: string[];
}

function table(title: string, cases: Case[]): void {
  describe(title, () => {
    for (const c of cases) {
      test(c.name, () => {
        const { attributes, codes } = canon(c.input);
        assert.deepEqual(attributes, c.expected);
        assert.deepEqual(codes, c.codes ?? []);
      });
    }
  });
}

const alert = {
  alert_severity: 'medium',
  rule_id: '2027863',
  rule_msg: 'ET INFO Observed DNS Query',
  rule_source: 'Proofpoint Emerging Threats Open',
};

table('ids_alerts / ids_results', [
  {
    name: 'ids_results (no rule_category) is renamed to ids_alerts',
    input: { ids_results: [{ ...alert, alert_context: { dest_ip: '8.8.8.8', dest_port: 53, protocol: 'UDP' } }] },
    expected: { ids_alerts: [{ ...alert, alert_context: { dest_ip: '8.8.8.8', dest_port: 53, protocol: 'UDP' } }] },
    codes: ['renamed_field'],
  },
  {
    name: 'ids_alerts with rule_category passes through',
    input: { ids_alerts: [{ ...alert, rule_category: 'Misc activity', alert_context: { url: 'http://a/b', hostname: 'a' } }] },
    expected: { ids_alerts: [{ ...alert, rule_category: 'Misc activity', alert_context: { url: 'http://a/b', hostname: 'a' } }] },
  },
  {
    name: 'both spellings: ids_alerts first, then ids_results',
    input: { ids_results: [{ rule_id: '2' }], ids_alerts: [{ rule_id: '1' }] },
    expected: {
      ids_alerts: [
        { rule_id: '1', alert_context: {} },
        { rule_id: '2', alert_context: {} },
      ],
    },
    codes: ['renamed_field'],
  },
  {
    name: 'absent or null alert_context becomes {}',
    input: { ids_alerts: [{ rule_id: '1' }, { rule_id: '2', alert_context: null }] },
    expected: {
      ids_alerts: [
        { rule_id: '1', alert_context: {} },
        { rule_id: '2', alert_context: {} },
      ],
    },
  },
  {
    name: 'numeric-string ports become integers; junk ports are dropped',
    input: { ids_alerts: [{ alert_context: { src_port: '49152', dest_port: 'http', src_ip: '10.0.2.15' } }] },
    expected: { ids_alerts: [{ alert_context: { src_port: 49152, src_ip: '10.0.2.15' } }] },
    codes: ['coerced_scalar', 'dropped_field'],
  },
  {
    name: 'a numeric rule_id (SID) is stringified',
    input: { ids_alerts: [{ rule_id: 2027863, alert_context: {} }] },
    expected: { ids_alerts: [{ rule_id: '2027863', alert_context: {} }] },
    codes: ['coerced_scalar'],
  },
  {
    name: 'a non-object alert_context is replaced by {}',
    input: { ids_alerts: [{ alert_context: 'dest 1.2.3.4' }] },
    expected: { ids_alerts: [{ alert_context: {} }] },
    codes: ['dropped_field'],
  },
  {
    name: 'ids_results alone as a single object',
    input: { ids_results: { rule_id: '9' } },
    expected: { ids_alerts: [{ rule_id: '9', alert_context: {} }] },
    codes: ['coerced_scalar', 'renamed_field'],
  },
]);

const sigma = { rule_id: 'a8b9c0', rule_title: 'Suspicious PowerShell', rule_level: 'high' };
const ev1 = { EventID: '1', Image: 'C:\\x.exe' };
const ev2 = { EventID: '13', TargetObject: 'HKLM\\Run' };

table('sigma match_context', [
  {
    name: 'list of {values} (sample payloads) is canonical',
    input: { sigma_analysis_results: [{ ...sigma, match_context: [{ values: ev1 }, { values: ev2 }] }] },
    expected: { sigma_analysis_results: [{ ...sigma, match_context: [{ values: ev1 }, { values: ev2 }] }] },
  },
  {
    name: 'dict {values: [maps]} (attribute description)',
    input: { sigma_analysis_results: [{ ...sigma, match_context: { values: [ev1, ev2] } }] },
    expected: { sigma_analysis_results: [{ ...sigma, match_context: [{ values: ev1 }, { values: ev2 }] }] },
  },
  {
    name: 'dict {values: map}',
    input: { sigma_analysis_results: [{ ...sigma, match_context: { values: ev1 } }] },
    expected: { sigma_analysis_results: [{ ...sigma, match_context: [{ values: ev1 }] }] },
  },
  {
    name: 'list of bare event maps',
    input: { sigma_analysis_results: [{ ...sigma, match_context: [ev1, ev2] }] },
    expected: { sigma_analysis_results: [{ ...sigma, match_context: [{ values: ev1 }, { values: ev2 }] }] },
  },
  {
    name: 'non-string values are stringified, null values dropped',
    input: {
      sigma_analysis_results: [
        { rule_id: 'r', match_context: [{ values: { EventID: 1, Hidden: true, Data: ['a'], Empty: null, S: 's' } }] },
      ],
    },
    expected: {
      sigma_analysis_results: [{ rule_id: 'r', match_context: [{ values: { EventID: '1', Hidden: 'true', Data: '["a"]', S: 's' } }] }],
    },
    codes: ['coerced_scalar', 'coerced_scalar', 'coerced_scalar', 'dropped_item'],
  },
  {
    name: 'entries may lack rule_title etc.; absent match_context stays absent',
    input: { sigma_analysis_results: [{ rule_id: 'r1' }] },
    expected: { sigma_analysis_results: [{ rule_id: 'r1' }] },
  },
  {
    name: 'non-object items and keys beside values are dropped with warnings',
    input: { sigma_analysis_results: [{ rule_id: 'r', match_context: [1, { values: ev1, note: 'x' }] }] },
    expected: { sigma_analysis_results: [{ rule_id: 'r', match_context: [{ values: ev1 }] }] },
    codes: ['dropped_item', 'dropped_field'],
  },
]);

table('signature_matches authors', [
  {
    name: 'list of strings',
    input: { signature_matches: [{ format: 'SIG_FORMAT_YARA', name: 'r', authors: ['a', 'b'] }] },
    expected: { signature_matches: [{ format: 'SIG_FORMAT_YARA', name: 'r', authors: ['a', 'b'] }] },
  },
  {
    name: 'dict: its string values in key order',
    input: { signature_matches: [{ authors: { first: 'a', second: 'b' } }] },
    expected: { signature_matches: [{ authors: ['a', 'b'] }] },
  },
  {
    name: 'nested lists are flattened, in dicts too',
    input: { signature_matches: [{ authors: { x: ['a', ['b']], y: 'c' } }, { authors: ['d', ['e', 'f']] }] },
    expected: { signature_matches: [{ authors: ['a', 'b', 'c'] }, { authors: ['d', 'e', 'f'] }] },
  },
  {
    name: 'a lone string becomes a list; null items are dropped',
    input: { signature_matches: [{ authors: 'a' }, { authors: ['b', null] }] },
    expected: { signature_matches: [{ authors: ['a'] }, { authors: ['b'] }] },
    codes: ['coerced_scalar', 'dropped_item'],
  },
]);

table('registry_keys_set', [
  {
    name: 'absent value becomes null; null and strings kept',
    input: { registry_keys_set: [{ key: 'HKCU\\A' }, { key: 'HKCU\\B', value: null }, { key: 'HKCU\\C', value: 'x' }] },
    expected: {
      registry_keys_set: [
        { key: 'HKCU\\A', value: null },
        { key: 'HKCU\\B', value: null },
        { key: 'HKCU\\C', value: 'x' },
      ],
    },
  },
  {
    name: 'numeric value stringified',
    input: { registry_keys_set: [{ key: 'k', value: 1 }] },
    expected: { registry_keys_set: [{ key: 'k', value: '1' }] },
    codes: ['coerced_scalar'],
  },
]);

table('processes_tree', [
  {
    name: 'time_offset only on children, never invented; children always present; pids stringified',
    input: {
      processes_tree: [
        { name: 'a.exe', process_id: 1234, children: [{ name: 'b.exe', process_id: '2000', time_offset: 3 }] },
        { name: 'c.exe', process_id: '7' },
      ],
    },
    expected: {
      processes_tree: [
        { name: 'a.exe', process_id: '1234', children: [{ name: 'b.exe', process_id: '2000', time_offset: 3, children: [] }] },
        { name: 'c.exe', process_id: '7', children: [] },
      ],
    },
    codes: ['coerced_scalar'],
  },
  {
    name: 'unknown node fields kept; null children become []; lone child object wrapped',
    input: {
      processes_tree: [
        { name: 'a', files: ['x'], children: null },
        { name: 'b', children: { name: 'c', time_offset: '4' } },
      ],
    },
    expected: {
      processes_tree: [
        { name: 'a', files: ['x'], children: [] },
        { name: 'b', children: [{ name: 'c', time_offset: 4, children: [] }] },
      ],
    },
    codes: ['coerced_scalar', 'coerced_scalar'],
  },
]);

table('hashes in upper case', [
  {
    name: 'files_dropped sha256, ja3_digests, tls ja3/ja3s/thumbprint are lower-cased',
    input: {
      files_dropped: [{ path: 'C:\\A.EXE', sha256: 'ABCDEF' }],
      ja3_digests: ['AA', 'bb'],
      tls: [{ ja3: 'CC', ja3s: 'DD', thumbprint: 'EE', serial_number: 'FF', sni: 'Host.Example' }],
    },
    expected: {
      files_dropped: [{ path: 'C:\\A.EXE', sha256: 'abcdef' }],
      ja3_digests: ['aa', 'bb'],
      tls: [{ ja3: 'cc', ja3s: 'dd', thumbprint: 'ee', serial_number: 'FF', sni: 'Host.Example' }],
    },
    codes: ['lowercased', 'lowercased', 'lowercased', 'lowercased', 'lowercased'],
  },
]);
