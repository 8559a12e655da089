import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { VariantName } from '../../src/synth/index.js';

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = 'synth-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Decompresses a batch file independently of the generator (bzip2 -dc, zlib, or plain read). */
export function readBatch(path: string): string {
  if (path.endsWith('.bz2')) return execFileSync('bzip2', ['-dc', path], { maxBuffer: 1 << 30, encoding: 'utf8' });
  if (path.endsWith('.gz')) return gunzipSync(readFileSync(path)).toString('utf8');
  return readFileSync(path, 'utf8');
}

/** Lines of a batch (every line ends with `\n`, so the trailing empty piece is dropped). */
export function batchLines(path: string): string[] {
  const text = readBatch(path);
  if (text.length > 0 && !text.endsWith('\n')) throw new Error(`${path}: last line lacks its newline`);
  return text.length === 0 ? [] : text.slice(0, -1).split('\n');
}

/** How a pipeline would classify a line: a record with a canonical id, or why it is rejected. */
export type LineVerdict =
  | { ok: true; id: string; record: Record<string, unknown> }
  | { ok: false; why: 'parse' | 'array' | 'number' | 'missing_id' | 'bad_id' | 'other' };

const ID_RE = /^[0-9a-fA-F]{64}_.+$/;

/** Classifies one feed line the way the design's strict-identity normalizer must. */
export function classify(line: string): LineVerdict {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return { ok: false, why: 'parse' };
  }
  if (Array.isArray(v)) return { ok: false, why: 'array' };
  if (typeof v === 'number') return { ok: false, why: 'number' };
  if (typeof v !== 'object' || v === null) return { ok: false, why: 'other' };
  const rec = v as Record<string, unknown>;
  if (!('id' in rec)) return { ok: false, why: 'missing_id' };
  if (typeof rec.id !== 'string' || !ID_RE.test(rec.id)) return { ok: false, why: 'bad_id' };
  return { ok: true, id: rec.id.slice(0, 64).toLowerCase() + rec.id.slice(64), record: rec };
}

/** Attributes the spec lists (Windows, Android and common); anything else is an unknown attribute. */
export const SPEC_ATTRIBUTES = new Set(
  'analysis_date last_modification_date sandbox_name behash calls_highlighted command_executions files_opened files_written files_deleted files_attribute_changed files_copied files_dropped has_html_report has_evtx has_memdump has_pcap hosts_file processes_created processes_terminated processes_killed processes_injected processes_tree services_opened services_created services_started services_stopped services_deleted services_bound windows_searched windows_hidden mutexes_opened mutexes_created signals_observed invokes crypto_algorithms_observed crypto_keys crypto_plain_text text_decoded text_highlighted verdict_confidence verdicts tags ja3_digests dns_lookups http_conversations ip_traffic tls ids_alerts ids_results sigma_analysis_results signature_matches mitre_attack_techniques activities_started content_model_observers content_model_sets databases_deleted databases_opened permissions_requested shared_preferences_lookups shared_preferences_sets signals_hooked system_property_lookups system_property_sets modules_loaded registry_keys_opened registry_keys_set registry_keys_deleted'.split(
    ' ',
  ),
);

/** Attributes typed "list of strings". */
export const STRING_LIST_ATTRIBUTES = new Set(
  'calls_highlighted command_executions files_opened files_written files_deleted files_attribute_changed processes_created processes_terminated processes_killed processes_injected services_opened services_created services_started services_stopped services_deleted services_bound windows_searched windows_hidden mutexes_opened mutexes_created signals_observed invokes crypto_algorithms_observed crypto_keys crypto_plain_text text_decoded text_highlighted verdicts tags ja3_digests modules_loaded registry_keys_opened registry_keys_deleted activities_started databases_opened permissions_requested signals_hooked system_property_lookups'.split(
    ' ',
  ),
);

const CONTEXT_KEYS = new Set(['file_md5', 'file_sha1', 'file_type_tag', 'html_report', 'pcap', 'evtx', 'memdump']);
const arr = (v: unknown): Array<Record<string, unknown>> => (Array.isArray(v) ? (v as Array<Record<string, unknown>>) : []);
const hasUpper = (s: unknown): boolean => typeof s === 'string' && s !== s.toLowerCase();

interface TreeNode {
  time_offset?: unknown;
  children?: TreeNode[];
}

/**
 * Variants a parsed record shows, found from the data alone (not from generator bookkeeping), so
 * the tests check what a normalizer will actually see.
 */
export function detectVariants(record: Record<string, unknown>, lineBytes: number): Set<VariantName> {
  const out = new Set<VariantName>();
  const id = String(record.id);
  const a = record.attributes as Record<string, unknown>;
  if ('ids_alerts' in a) out.add('ids_alerts');
  if ('ids_results' in a) out.add('ids_results');
  for (const alert of [...arr(a.ids_alerts), ...arr(a.ids_results)]) {
    const ctx = alert.alert_context as Record<string, unknown>;
    if (!('dest_port' in ctx) || !('src_port' in ctx)) out.add('alert_context_missing_keys');
  }
  for (const s of arr(a.sigma_analysis_results)) {
    out.add(Array.isArray(s.match_context) ? 'sigma_match_context_list' : 'sigma_match_context_dict');
    if (!('rule_title' in s)) out.add('sigma_sparse');
  }
  for (const m of arr(a.signature_matches)) out.add(Array.isArray(m.authors) ? 'authors_list' : 'authors_dict');
  if (arr(a.registry_keys_set).some((e) => !('value' in e))) out.add('registry_value_absent');
  const walk = (nodes: TreeNode[]): void => {
    for (const n of nodes) {
      if (n.children) {
        if (n.children.some((c) => 'time_offset' in c)) out.add('child_time_offset');
        walk(n.children);
      }
    }
  };
  walk(arr(a.processes_tree) as TreeNode[]);
  if (hasUpper(id.slice(0, 64))) out.add('upper_case_id');
  if (arr(a.files_dropped).some((f) => hasUpper(f.sha256))) out.add('upper_case_dropped_sha256');
  if (arr(a.tls).some((t) => hasUpper(t.ja3)) || (Array.isArray(a.ja3_digests) && a.ja3_digests.some(hasUpper))) out.add('upper_case_ja3');
  const sandboxPart = id.slice(65);
  if (sandboxPart.includes(' ')) out.add('sandbox_with_space');
  if (/-\d{9,}$/.test(sandboxPart)) out.add('private_sandbox');
  for (const k of STRING_LIST_ATTRIBUTES) {
    if (!(k in a)) continue;
    const v = a[k];
    if (!Array.isArray(v)) out.add('scalar_for_list');
    else if (v.some((x) => typeof x !== 'string')) out.add('non_string_items');
  }
  if (Object.keys(record.context_attributes as object).some((k) => !CONTEXT_KEYS.has(k))) out.add('context_extras');
  if ('relationships' in record) out.add('relationships');
  if (Object.keys(a).some((k) => !SPEC_ATTRIBUTES.has(k))) out.add('unknown_attributes');
  if ('hosts_file' in a) out.add('hosts_file');
  if (lineBytes > 100_000) out.add('big');
  return out;
}

/** Checks the time_offset rule on a whole tree: never on roots, always on children. */
export function timeOffsetRuleHolds(tree: unknown): boolean {
  const roots = arr(tree) as TreeNode[];
  if (roots.some((r) => 'time_offset' in r)) return false;
  const kids = (nodes: TreeNode[]): boolean => nodes.every((n) => Number.isInteger(n.time_offset) && kids(n.children ?? []));
  return roots.every((r) => kids(r.children ?? []));
}
