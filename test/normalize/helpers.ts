/**
 * Shared helpers of the normalizer tests: record builders, result unwrapping, and an
 * independent checker of the canonical shape (written from the spec, not from the code, so a
 * coercer that lets a wrong type through is caught).
 */
import assert from 'node:assert/strict';
import {
  REJECT_CODES,
  WARNING_CODES,
  normalizeRecord,
  type BehaviourDoc,
  type NormalizeResult,
  type NormalizeWarning,
  type Rejection,
} from '../../src/normalize/index.js';

export const SHA = '275a021bbfb6489e54d471899f7db9d1663fc695ec2fe2a2c4538aabf651fd0f';
export const SANDBOX = 'VirusTotal Jujubox';
export const ID = `${SHA}_${SANDBOX}`;

/** A minimal valid record around `attributes`. */
export function record(attributes: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'file_behaviour', id: ID, attributes, links: { self: `https://x/api/v3/file_behaviours/${ID}` }, ...extra };
}

/** Normalizes and asserts acceptance. */
export function accept(value: unknown): { doc: BehaviourDoc; warnings: NormalizeWarning[] } {
  const r = normalizeRecord(value);
  if (!r.ok) assert.fail(`expected acceptance, got ${JSON.stringify(r.rejection)}`);
  return r;
}

/** Normalizes and asserts rejection. */
export function rejectionOf(r: NormalizeResult): Rejection {
  if (r.ok) assert.fail(`expected a rejection, got a doc (${r.doc.id})`);
  return r.rejection;
}

/** Canonical attributes of `record(attributes)` (the dates are supplied, so no date warnings). */
export function canon(attributes: Record<string, unknown>): { attributes: Record<string, unknown>; codes: string[] } {
  const { doc, warnings } = accept(record({ analysis_date: 1, last_modification_date: 2, ...attributes }));
  const { analysis_date: _a, last_modification_date: _l, ...rest } = doc.attributes;
  return { attributes: rest, codes: warnings.map((w) => w.code) };
}

const HEX64 = /^[0-9a-f]{64}$/;
/** The spec's list-of-strings attributes, written out independently of the normalizer's table. */
export const STRING_LISTS = new Set([
  'calls_highlighted',
  'command_executions',
  'files_opened',
  'files_written',
  'files_deleted',
  'files_attribute_changed',
  'processes_created',
  'processes_terminated',
  'processes_killed',
  'processes_injected',
  'services_opened',
  'services_created',
  'services_started',
  'services_stopped',
  'services_deleted',
  'services_bound',
  'windows_searched',
  'windows_hidden',
  'mutexes_opened',
  'mutexes_created',
  'signals_observed',
  'invokes',
  'crypto_algorithms_observed',
  'crypto_keys',
  'crypto_plain_text',
  'text_decoded',
  'text_highlighted',
  'verdicts',
  'tags',
  'ja3_digests',
  'modules_loaded',
  'registry_keys_opened',
  'registry_keys_deleted',
  'activities_started',
  'content_model_observers',
  'databases_deleted',
  'databases_opened',
  'permissions_requested',
  'shared_preferences_lookups',
  'signals_hooked',
  'system_property_lookups',
]);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStrList = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string');
const isStrMap = (v: unknown): boolean => isObj(v) && Object.values(v).every((s) => typeof s === 'string');
const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && !Object.is(v, -0);

/** Spec type of each known entry sub-field: 's' string, 'i' integer, 'h' lower-case string, 'l' string list, 'm' string map. */
const ENTRY_FIELDS: Record<string, Record<string, string>> = {
  files_copied: { source: 's', destination: 's' },
  files_dropped: { path: 's', sha256: 'h' },
  dns_lookups: { hostname: 's', resolved_ips: 'l' },
  http_conversations: { request_headers: 'm', request_method: 's', url: 's' },
  ip_traffic: { destination_ip: 's', destination_port: 'i', transport_layer_protocol: 's' },
  tls: { issuer: 'm', subject: 'm', ja3: 'h', ja3s: 'h', serial_number: 's', sni: 's', thumbprint: 'h', version: 's' },
  ids_alerts: { alert_severity: 's', rule_category: 's', rule_id: 's', rule_msg: 's', rule_source: 's' },
  sigma_analysis_results: { rule_title: 's', rule_source: 's', rule_level: 's', rule_description: 's', rule_author: 's', rule_id: 's' },
  signature_matches: { format: 's', authors: 'l', rule_src: 's', name: 's', description: 's' },
  mitre_attack_techniques: { signature_description: 's', id: 's', severity: 's' },
  registry_keys_set: { key: 's' },
  shared_preferences_sets: { key: 's', value: 's' },
  system_property_sets: { key: 's', value: 's' },
  content_model_sets: {},
};

function checkField(kind: string, v: unknown, where: string, problems: string[]): void {
  const ok =
    kind === 's'
      ? typeof v === 'string'
      : kind === 'h'
        ? typeof v === 'string' && v === v.toLowerCase()
        : kind === 'i'
          ? isInt(v)
          : kind === 'l'
            ? isStrList(v)
            : isStrMap(v);
  if (!ok) problems.push(`${where}: not canonical (${kind})`);
}

function checkNodes(nodes: unknown, where: string, depth: number, problems: string[]): void {
  if (!Array.isArray(nodes)) return void problems.push(`${where}: not a list`);
  if (depth > 64) return void problems.push(`${where}: deeper than 64`);
  nodes.forEach((n, i) => {
    const at = `${where}[${i}]`;
    if (!isObj(n)) return void problems.push(`${at}: not an object`);
    if (n.name !== undefined) checkField('s', n.name, `${at}.name`, problems);
    if (n.process_id !== undefined) checkField('s', n.process_id, `${at}.process_id`, problems);
    if (n.time_offset !== undefined) checkField('i', n.time_offset, `${at}.time_offset`, problems);
    checkNodes(n.children, `${at}.children`, depth + 1, problems);
  });
}

const SCALARS = new Set([
  'analysis_date',
  'last_modification_date',
  'verdict_confidence',
  'sandbox_name',
  'behash',
  'hosts_file',
  'has_html_report',
  'has_evtx',
  'has_memdump',
  'has_pcap',
  'processes_tree',
]);

/** Problems found in canonical attributes (empty when canonical). */
export function canonicalProblems(attrs: Record<string, unknown>): string[] {
  const p: string[] = [];
  if ('ids_results' in attrs) p.push('ids_results survived');
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined) p.push(`${k}: undefined kept`);
    // Unknown attributes are verbatim (null included); known ones are never null.
    if (v === null && (STRING_LISTS.has(k) || Object.hasOwn(ENTRY_FIELDS, k) || SCALARS.has(k))) p.push(`${k}: null kept`);
    if (STRING_LISTS.has(k)) checkField('l', v, k, p);
    if (k === 'ja3_digests' && isStrList(v) && (v as string[]).some((s) => s !== s.toLowerCase())) p.push('ja3_digests not lower');
    if (['analysis_date', 'last_modification_date', 'verdict_confidence'].includes(k)) checkField('i', v, k, p);
    if (['sandbox_name', 'behash', 'hosts_file'].includes(k)) checkField('s', v, k, p);
    if (['has_html_report', 'has_evtx', 'has_memdump', 'has_pcap'].includes(k) && typeof v !== 'boolean') p.push(`${k}: not boolean`);
    if (k === 'processes_tree') checkNodes(v, k, 1, p);
    const fields = Object.hasOwn(ENTRY_FIELDS, k) ? ENTRY_FIELDS[k] : undefined;
    if (fields === undefined) continue;
    if (!Array.isArray(v)) {
      p.push(`${k}: not a list`);
      continue;
    }
    v.forEach((e: unknown, i) => {
      const at = `${k}[${i}]`;
      if (!isObj(e)) return void p.push(`${at}: not an object`);
      for (const [f, kind] of Object.entries(fields)) if (e[f] !== undefined) checkField(kind, e[f], `${at}.${f}`, p);
      if (k === 'ids_alerts') {
        const ctx = e.alert_context;
        if (!isObj(ctx)) p.push(`${at}.alert_context: not an object`);
        else for (const f of ['dest_port', 'src_port']) if (ctx[f] !== undefined) checkField('i', ctx[f], `${at}.alert_context.${f}`, p);
      }
      if (k === 'registry_keys_set' && !(typeof e.value === 'string' || e.value === null)) p.push(`${at}.value: not string|null`);
      if (k === 'sigma_analysis_results' && e.match_context !== undefined) {
        const mc = e.match_context;
        if (!Array.isArray(mc)) p.push(`${at}.match_context: not a list`);
        else
          mc.forEach((m: unknown, j) => {
            if (!isObj(m) || Object.keys(m).join() !== 'values' || !isStrMap(m.values)) p.push(`${at}.match_context[${j}]: not {values}`);
          });
      }
    });
  }
  return p;
}

/** Asserts the result is well-formed whatever the input (used by the never-throws properties). */
export function assertWellFormed(r: NormalizeResult): void {
  assert.equal(typeof r, 'object');
  if (!r.ok) {
    assert.ok(REJECT_CODES.includes(r.rejection.code));
    assert.ok(r.rejection.code !== 'line_too_long' && r.rejection.code !== 'invalid_utf8');
    assert.ok(r.rejection.path.startsWith('$'));
    assert.equal(typeof r.rejection.message, 'string');
    return;
  }
  const d = r.doc;
  assert.equal(d.schema_version, 1);
  assert.match(d.sha256, HEX64);
  assert.ok(d.id.startsWith(`${d.sha256}_`) && d.id.length > 65);
  assert.ok(typeof d.sandbox_name === 'string' && d.sandbox_name.trim() !== '');
  assert.ok(d.analysis_date === null || isInt(d.analysis_date));
  assert.ok(isInt(d.last_modification_date));
  assert.ok(isObj(d.attributes));
  assert.deepEqual(canonicalProblems(d.attributes), []);
  assert.ok(d.context_attributes === undefined || isObj(d.context_attributes));
  assert.ok(d.relationships === undefined || isObj(d.relationships));
  assert.ok(d.pivots.behash === null || typeof d.pivots.behash === 'string');
  for (const w of r.warnings) {
    assert.ok(WARNING_CODES.includes(w.code), w.code);
    assert.ok(w.path.startsWith('$'));
    assert.equal(typeof w.message, 'string');
  }
}

/** The input form of a doc: what idempotence re-normalizes. */
export function reshape(doc: BehaviourDoc): Record<string, unknown> {
  return {
    id: doc.id,
    type: 'file_behaviour',
    attributes: doc.attributes,
    context_attributes: doc.context_attributes,
    relationships: doc.relationships,
  };
}
