/**
 * Canonical shapes of file_behaviour attributes (spec: "file_behaviour" attribute tables).
 *
 * Every field is optional because the normalizer never invents a field the report did not
 * carry; the exceptions are fields whose canonical form is fixed by the variant rules
 * (`IdsAlert.alert_context`, `RegistryKeySet.value`, `ProcessNode.children`). Every entry type
 * keeps unknown sub-fields verbatim, hence the index signatures.
 */

/** `files_copied[]`. */
export interface FileCopy {
  source?: string;
  destination?: string;
  [key: string]: unknown;
}

/** `files_dropped[]`; `sha256` is lower-cased but not validated (pivots only take valid ones). */
export interface DroppedFile {
  path?: string;
  sha256?: string;
  [key: string]: unknown;
}

/** `dns_lookups[]`. */
export interface DnsLookup {
  hostname?: string;
  resolved_ips?: string[];
  [key: string]: unknown;
}

/** `http_conversations[]`. */
export interface HttpConversation {
  request_headers?: Record<string, string>;
  request_method?: string;
  url?: string;
  [key: string]: unknown;
}

/** `ip_traffic[]`. */
export interface IpTraffic {
  destination_ip?: string;
  destination_port?: number;
  transport_layer_protocol?: string;
  [key: string]: unknown;
}

/** `tls[]`; `ja3`, `ja3s` and `thumbprint` are lower-cased. */
export interface TlsEntry {
  issuer?: Record<string, string>;
  subject?: Record<string, string>;
  ja3?: string;
  ja3s?: string;
  serial_number?: string;
  sni?: string;
  thumbprint?: string;
  version?: string;
  [key: string]: unknown;
}

/** `ids_alerts[].alert_context`; keys are often missing in real payloads. */
export interface IdsAlertContext {
  dest_ip?: string;
  dest_port?: number;
  hostname?: string;
  protocol?: string;
  src_ip?: string;
  src_port?: number;
  url?: string;
  [key: string]: unknown;
}

/** `ids_alerts[]` (also read from the `ids_results` spelling). */
export interface IdsAlert {
  /** Always present in canonical form (empty object when the input had none). */
  alert_context: IdsAlertContext;
  alert_severity?: string;
  rule_category?: string;
  rule_id?: string;
  rule_msg?: string;
  rule_source?: string;
  [key: string]: unknown;
}

/** One matched event of a sigma rule. */
export interface SigmaMatch {
  values: Record<string, string>;
}

/** `sigma_analysis_results[]`. */
export interface SigmaResult {
  rule_title?: string;
  rule_source?: string;
  /** Canonical: always a list of `{values}`, whatever input variant. */
  match_context?: SigmaMatch[];
  rule_level?: string;
  rule_description?: string;
  rule_author?: string;
  rule_id?: string;
  [key: string]: unknown;
}

/** `signature_matches[]`. */
export interface SignatureMatch {
  format?: string;
  /** Canonical: a list of strings (the spec's dictionary variant is flattened). */
  authors?: string[];
  rule_src?: string;
  name?: string;
  description?: string;
  [key: string]: unknown;
}

/** `mitre_attack_techniques[]`. */
export interface MitreTechnique {
  signature_description?: string;
  id?: string;
  severity?: string;
  [key: string]: unknown;
}

/** `processes_tree[]` node. */
export interface ProcessNode {
  name?: string;
  process_id?: string;
  /** Present only when the input had it (child nodes, per the spec). */
  time_offset?: number;
  /** Always present in canonical form. */
  children: ProcessNode[];
  [key: string]: unknown;
}

/** `registry_keys_set[]`. */
export interface RegistryKeySet {
  key?: string;
  /** null when the input had no value. */
  value: string | null;
  [key: string]: unknown;
}

/** `shared_preferences_sets[]` and `system_property_sets[]` (Android). */
export interface KeyValueSet {
  key?: string;
  value?: string;
  [key: string]: unknown;
}

/** `content_model_sets[]` (Android): no sub-fields are specified, so entries are kept as given. */
export type ContentModelSet = Record<string, unknown>;

/** The canonical attributes object. Unknown attributes are kept verbatim. */
export interface CanonicalAttributes {
  analysis_date?: number;
  last_modification_date?: number;
  sandbox_name?: string;
  behash?: string;
  hosts_file?: string;
  verdict_confidence?: number;
  has_html_report?: boolean;
  has_evtx?: boolean;
  has_memdump?: boolean;
  has_pcap?: boolean;

  calls_highlighted?: string[];
  command_executions?: string[];
  files_opened?: string[];
  files_written?: string[];
  files_deleted?: string[];
  files_attribute_changed?: string[];
  processes_created?: string[];
  processes_terminated?: string[];
  processes_killed?: string[];
  processes_injected?: string[];
  services_opened?: string[];
  services_created?: string[];
  services_started?: string[];
  services_stopped?: string[];
  services_deleted?: string[];
  services_bound?: string[];
  windows_searched?: string[];
  windows_hidden?: string[];
  mutexes_opened?: string[];
  mutexes_created?: string[];
  signals_observed?: string[];
  invokes?: string[];
  crypto_algorithms_observed?: string[];
  crypto_keys?: string[];
  crypto_plain_text?: string[];
  text_decoded?: string[];
  text_highlighted?: string[];
  verdicts?: string[];
  tags?: string[];
  /** Lower-cased. */
  ja3_digests?: string[];
  modules_loaded?: string[];
  registry_keys_opened?: string[];
  registry_keys_deleted?: string[];
  activities_started?: string[];
  content_model_observers?: string[];
  databases_deleted?: string[];
  databases_opened?: string[];
  permissions_requested?: string[];
  shared_preferences_lookups?: string[];
  signals_hooked?: string[];
  system_property_lookups?: string[];

  files_copied?: FileCopy[];
  files_dropped?: DroppedFile[];
  dns_lookups?: DnsLookup[];
  http_conversations?: HttpConversation[];
  ip_traffic?: IpTraffic[];
  tls?: TlsEntry[];
  /** Also receives `ids_results` (appended after any `ids_alerts`). */
  ids_alerts?: IdsAlert[];
  sigma_analysis_results?: SigmaResult[];
  signature_matches?: SignatureMatch[];
  mitre_attack_techniques?: MitreTechnique[];
  processes_tree?: ProcessNode[];
  registry_keys_set?: RegistryKeySet[];
  shared_preferences_sets?: KeyValueSet[];
  system_property_sets?: KeyValueSet[];
  content_model_sets?: ContentModelSet[];

  [key: string]: unknown;
}
