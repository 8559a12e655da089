/**
 * Field tables of the plain object entries (files, network, TLS, IDS, MITRE, registry,
 * Android sets). Entries with variant shapes of their own live in normalizeSigmaResult.ts,
 * normalizeSignatureMatch.ts and normalizeProcessTree.ts.
 */
import { coerceHash, coerceInt, coerceString, stringifyValue, type Coerce } from './coerceScalar.js';
import { coerceStringList, coerceStringMap, entryOf, schemaOf, type EntryFn } from './coerceList.js';
import { isRecord, kindOf, pathOf } from './WarningLog.js';

const str = coerceString;
const int = coerceInt;
const hash = coerceHash;

/** `files_copied[]`. */
export const normalizeFileCopy: EntryFn = entryOf(schemaOf({ source: str, destination: str }));

/**
 * `files_dropped[]`: sha256 lower-cased (validity is checked only when building pivots). `type`
 * is not in the spec but the feed carries it: a text, as both stores index it.
 */
export const normalizeDroppedFile: EntryFn = entryOf(schemaOf({ path: str, sha256: hash, type: str }));

/** `dns_lookups[]`. */
export const normalizeDnsLookup: EntryFn = entryOf(schemaOf({ hostname: str, resolved_ips: coerceStringList }));

/** `http_conversations[]`. */
export const normalizeHttpConversation: EntryFn = entryOf(schemaOf({ request_headers: coerceStringMap, request_method: str, url: str }));

/** `ip_traffic[]`. */
export const normalizeIpTraffic: EntryFn = entryOf(schemaOf({ destination_ip: str, destination_port: int, transport_layer_protocol: str }));

/** `tls[]`: ja3, ja3s and thumbprint lower-cased. */
export const normalizeTls: EntryFn = entryOf(
  schemaOf({
    issuer: coerceStringMap,
    subject: coerceStringMap,
    ja3: hash,
    ja3s: hash,
    serial_number: str,
    sni: str,
    thumbprint: hash,
    version: str,
  }),
);

/** `mitre_attack_techniques[]`. */
export const normalizeMitreTechnique: EntryFn = entryOf(schemaOf({ signature_description: str, id: str, severity: str }));

/** `shared_preferences_sets[]`, `system_property_sets[]`. */
export const normalizeKeyValueSet: EntryFn = entryOf(schemaOf({ key: str, value: str }));

/** `content_model_sets[]`: no sub-fields specified; entries are copied (unknown fields kept). */
export const normalizeContentModelSet: EntryFn = entryOf(new Map());

/**
 * Registry value: a string, or null ("absent" is canonically null). Numbers/booleans are
 * stringified, objects kept as JSON text (REG_MULTI_SZ-like payloads stay searchable).
 */
const coerceRegistryValue: Coerce = (v, parent, key, w): string | null | undefined => {
  if (typeof v === 'string' || v === null || v === undefined) return v ?? null;
  const s = stringifyValue(v);
  if (s === undefined) {
    w.addAt('dropped_field', parent, key, `expected a string, got ${kindOf(v)}`);
    return null;
  }
  w.addAt('coerced_scalar', parent, key, `expected a string, got ${kindOf(v)}: stringified`);
  return s;
};

/** `registry_keys_set[]`: `value` always present (null when the input had none). */
export const normalizeRegistryKeySet: EntryFn = entryOf(schemaOf({ key: str, value: coerceRegistryValue }), (out) => {
  if (out.value === undefined) out.value = null;
});

const normalizeAlertContextObject: EntryFn = entryOf(
  schemaOf({ dest_ip: str, dest_port: int, hostname: str, protocol: str, src_ip: str, src_port: int, url: str }),
);

/**
 * `alert_context`: canonically always an object. Absent/null → `{}`. A list (seen in some
 * exports) contributes its first object; further items are dropped with a warning.
 */
const coerceAlertContext: Coerce = (v, parent, key, w): Record<string, unknown> => {
  if (isRecord(v)) return normalizeAlertContextObject(v, pathOf(parent, key), w);
  if (v === null || v === undefined) return {};
  if (Array.isArray(v)) {
    const path = pathOf(parent, key);
    let first: Record<string, unknown> | undefined;
    for (let i = 0; i < v.length; i++) {
      const it: unknown = v[i];
      if (first === undefined && isRecord(it)) first = normalizeAlertContextObject(it, `${path}[${i}]`, w);
      else w.addAt('dropped_item', path, i, 'alert_context is a single object: only the first object item is kept');
    }
    if (first !== undefined) {
      w.add('coerced_scalar', path, 'expected an object, got a list: first object kept');
      return first;
    }
  }
  w.addAt('dropped_field', parent, key, `expected an object, got ${kindOf(v)}: replaced by {}`);
  return {};
};

/** `ids_alerts[]` (and `ids_results[]`): `rule_category` left absent when absent. */
export const normalizeIdsAlert: EntryFn = entryOf(
  schemaOf({
    alert_context: coerceAlertContext,
    alert_severity: str,
    rule_category: str,
    rule_id: str,
    rule_msg: str,
    rule_source: str,
  }),
  (out) => {
    if (out.alert_context === undefined) out.alert_context = {};
  },
);
