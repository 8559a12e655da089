/**
 * The attribute table: which coercer applies to each spec'd file_behaviour attribute. Unknown
 * attributes are kept verbatim (by reference), so new upstream fields flow through untouched.
 */
import type { CanonicalAttributes } from './CanonicalAttributes.js';
import { coerceBool, coerceEpochSeconds, coerceInt, coerceString, type Coerce } from './coerceScalar.js';
import { coerceHashList, coerceStringList, objectListOf } from './coerceList.js';
import {
  normalizeContentModelSet,
  normalizeDnsLookup,
  normalizeDroppedFile,
  normalizeFileCopy,
  normalizeHttpConversation,
  normalizeIdsAlert,
  normalizeIpTraffic,
  normalizeKeyValueSet,
  normalizeMitreTechnique,
  normalizeRegistryKeySet,
  normalizeTls,
} from './entryNormalizers.js';
import { normalizeSigmaResult } from './normalizeSigmaResult.js';
import { normalizeSignatureMatch } from './normalizeSignatureMatch.js';
import { coerceProcessTree } from './normalizeProcessTree.js';
import { pathOf, setOwn, type WarningLog } from './WarningLog.js';

/** Spec'd attributes whose canonical type is a list of strings (Windows, Android and common). */
const STRING_LIST_ATTRIBUTES = [
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
] as const;

const idsAlerts = objectListOf(normalizeIdsAlert);

/** Attribute name → coercer. A Map, so inherited names (`constructor`, `__proto__`) never match. */
const ATTRIBUTES: ReadonlyMap<string, Coerce> = new Map<string, Coerce>([
  ['analysis_date', coerceEpochSeconds],
  ['last_modification_date', coerceEpochSeconds],
  ['verdict_confidence', coerceInt],
  ['sandbox_name', coerceString],
  ['behash', coerceString],
  ['hosts_file', coerceString],
  ['has_html_report', coerceBool],
  ['has_evtx', coerceBool],
  ['has_memdump', coerceBool],
  ['has_pcap', coerceBool],
  ['ja3_digests', coerceHashList],
  ...STRING_LIST_ATTRIBUTES.map((name): [string, Coerce] => [name, coerceStringList]),
  ['files_copied', objectListOf(normalizeFileCopy)],
  ['files_dropped', objectListOf(normalizeDroppedFile)],
  ['dns_lookups', objectListOf(normalizeDnsLookup)],
  ['http_conversations', objectListOf(normalizeHttpConversation)],
  ['ip_traffic', objectListOf(normalizeIpTraffic)],
  ['tls', objectListOf(normalizeTls)],
  ['ids_alerts', idsAlerts],
  ['sigma_analysis_results', objectListOf(normalizeSigmaResult)],
  ['signature_matches', objectListOf(normalizeSignatureMatch)],
  ['mitre_attack_techniques', objectListOf(normalizeMitreTechnique)],
  ['processes_tree', coerceProcessTree],
  ['registry_keys_set', objectListOf(normalizeRegistryKeySet)],
  ['shared_preferences_sets', objectListOf(normalizeKeyValueSet)],
  ['system_property_sets', objectListOf(normalizeKeyValueSet)],
  ['content_model_sets', objectListOf(normalizeContentModelSet)],
]);

/** Names of every attribute the normalizer gives a canonical type to (for docs and mappings). */
export const KNOWN_ATTRIBUTES: readonly string[] = Object.freeze([...ATTRIBUTES.keys(), 'ids_results']);

/**
 * Builds canonical attributes from the raw `attributes` object found at `path`, in one pass
 * over its keys. `ids_results` (the sample payloads' spelling) is folded into `ids_alerts`,
 * appended after any `ids_alerts` entries so both spellings in one record lose nothing.
 */
export function normalizeAttributes(raw: Record<string, unknown>, path: string, w: WarningLog): CanonicalAttributes {
  const out: Record<string, unknown> = {};
  let idsResults: unknown[] | undefined;
  const keys = Object.keys(raw);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    const v = raw[k];
    if (k === 'ids_results') {
      const r = idsAlerts(v, path, k, w) as unknown[] | undefined;
      if (r !== undefined) {
        idsResults = r;
        w.add('renamed_field', pathOf(path, k), 'ids_results folded into ids_alerts');
      }
      continue;
    }
    const coerce = ATTRIBUTES.get(k);
    if (coerce === undefined) {
      if (v !== undefined) setOwn(out, k, v);
    } else {
      const r = coerce(v, path, k, w);
      if (r !== undefined) out[k] = r;
    }
  }
  if (idsResults !== undefined) {
    const existing = out.ids_alerts as unknown[] | undefined;
    out.ids_alerts = existing === undefined ? idsResults : existing.concat(idsResults);
  }
  return out as CanonicalAttributes;
}
