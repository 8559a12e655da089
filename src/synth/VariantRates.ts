/**
 * How often each documented feed variant (spec "Naming inconsistency", "Sample alerts may omit",
 * DESIGN §3 normalizer list) shows up in synthetic records. Every rate is a probability in [0, 1];
 * the comment says what it is drawn per (record, alert, entry...).
 */
export interface VariantRates {
  /** Per record with IDS entries: stored as `ids_results` without `rule_category` instead of `ids_alerts`. */
  idsResults: number;
  /** Per IDS alert: `alert_context` lacks some keys (ports, hostname, url...). */
  alertContextMissingKeys: number;
  /** Per sigma result: `match_context` is a `{values: [...]}` dict instead of a list of `{values}`. */
  sigmaMatchContextDict: number;
  /** Per sigma result: rule_title, rule_source and friends are missing. */
  sigmaSparse: number;
  /** Per signature match: `authors` is a dict instead of a list. */
  authorsDict: number;
  /** Per `registry_keys_set` entry: `value` is absent. */
  registryValueAbsent: number;
  /** Per hash site (id's sha part, `files_dropped[].sha256`, JA3): written in upper case. */
  upperCaseHash: number;
  /** Per record: a private analysis, whose id's sandbox part ends in `-<epoch>`. */
  privateSandbox: number;
  /** Per record: one list attribute holds a bare scalar instead of a list. */
  scalarForList: number;
  /** Per record: one string list carries numbers, nulls, booleans or objects among its strings. */
  nonStringItems: number;
  /** Per record: `context_attributes` carries keys beyond the documented seven. */
  contextExtras: number;
  /** Per record: the line carries a `relationships` object. */
  relationships: number;
  /** Per record: attributes carry fields the spec does not list. */
  unknownAttributes: number;
  /** Per record slot after the first minute: re-emit an earlier id with a newer last_modification_date. */
  update: number;
}

/** Defaults: every variant is common enough to appear in a few hundred records. */
export const DEFAULT_VARIANT_RATES: Readonly<VariantRates> = Object.freeze({
  idsResults: 0.35,
  alertContextMissingKeys: 0.25,
  sigmaMatchContextDict: 0.3,
  sigmaSparse: 0.1,
  authorsDict: 0.3,
  registryValueAbsent: 0.15,
  upperCaseHash: 0.03,
  privateSandbox: 0.05,
  scalarForList: 0.04,
  nonStringItems: 0.04,
  contextExtras: 0.2,
  relationships: 0.3,
  unknownAttributes: 0.08,
  update: 0.03,
});

/** Names under which variant occurrences are counted (manifest `variants`, tests). */
export const VARIANT_NAMES = [
  'ids_alerts',
  'ids_results',
  'alert_context_missing_keys',
  'sigma_match_context_list',
  'sigma_match_context_dict',
  'sigma_sparse',
  'authors_list',
  'authors_dict',
  'registry_value_absent',
  'child_time_offset',
  'upper_case_id',
  'upper_case_dropped_sha256',
  'upper_case_ja3',
  'sandbox_with_space',
  'private_sandbox',
  'scalar_for_list',
  'non_string_items',
  'context_extras',
  'relationships',
  'unknown_attributes',
  'hosts_file',
  'big',
  'update',
] as const;

/** One of {@link VARIANT_NAMES}. */
export type VariantName = (typeof VARIANT_NAMES)[number];

/** Occurrence counts per variant (a record counts once per variant it shows, at most). */
export type VariantTally = Record<VariantName, number>;

/** A zeroed tally. */
export function emptyTally(): VariantTally {
  const t = {} as VariantTally;
  for (const n of VARIANT_NAMES) t[n] = 0;
  return t;
}

/** Defaults overlaid with `partial`; rejects rates outside [0, 1] so typos fail loudly. */
export function resolveVariantRates(partial: Partial<VariantRates> = {}): VariantRates {
  // generateRecord resolves per record: skip the work for objects this function already returned.
  if (RESOLVED.has(partial)) return partial as VariantRates;
  const out = { ...DEFAULT_VARIANT_RATES, ...partial };
  for (const [k, v] of Object.entries(out)) {
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) throw new RangeError(`variant rate ${k} must be in [0, 1], got ${String(v)}`);
  }
  const frozen = Object.freeze(out);
  RESOLVED.add(frozen);
  return frozen;
}

const RESOLVED = new WeakSet<object>();
