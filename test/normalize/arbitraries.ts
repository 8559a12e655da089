/**
 * fast-check arbitraries of "valid-ish" file_behaviour records: every spec shape and every
 * variant the normalizer must fold (ids_results, sigma match_context shapes, authors dicts,
 * registry value absent, time_offset on children, upper-case hashes, feed-line extras), mixed
 * with the junk real feeds carry (scalars for lists, numbers for strings, unknown fields).
 */
import fc from 'fast-check';
import { KNOWN_ATTRIBUTES } from '../../src/normalize/index.js';

type Arb<T = unknown> = fc.Arbitrary<T>;

const hexChar = fc.constantFrom(...'0123456789abcdefABCDEF');
/** Hex string of length n in mixed case. */
export const hexN = (n: number): Arb<string> => fc.string({ unit: hexChar, minLength: n, maxLength: n });

const sandboxBase = fc.constantFrom('VirusTotal Jujubox', 'Zenbox', 'CAPE Sandbox', 'C2AE', 'Dr.Web vxCube', 'Zenbox android');
const sandboxPart = fc
  .tuple(sandboxBase, fc.option(fc.integer({ min: 0, max: 2_000_000_000 })))
  .map(([b, ts]) => (ts === null ? b : `${b}-${ts}`));
export const behaviourId: Arb<string> = fc.tuple(hexN(64), sandboxPart).map(([h, s]) => `${h}_${s}`);

const text = fc.string({ maxLength: 10 });
const anyText = fc.oneof({ weight: 4, arbitrary: text }, fc.string({ unit: 'binary', maxLength: 6 }));
const scalar = fc.oneof(
  { weight: 5, arbitrary: anyText },
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const junk = fc.oneof(scalar, fc.jsonValue({ maxDepth: 2 }));
const strish = fc.oneof({ weight: 8, arbitrary: anyText }, junk);
const intish = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -10, max: 2_000_000_000 }) },
  fc.integer({ min: 0, max: 70000 }).map(String),
  fc.double({ min: -5, max: 2e9, noNaN: true }),
  junk,
);
const boolish = fc.oneof({ weight: 4, arbitrary: fc.boolean() }, fc.constantFrom(0, 1, 'true', 'false', 'TRUE', ' 0 ', 'yes', 2), junk);
const hashish = fc.oneof({ weight: 5, arbitrary: hexN(64) }, hexN(32), fc.constant(''), anyText, fc.integer({ min: 0, max: 99 }));

/** A list of strings as feeds send it: mostly a list, sometimes a scalar, with junk items. */
const listOf = (item: Arb): Arb =>
  fc.oneof({ weight: 6, arbitrary: fc.array(fc.oneof({ weight: 6, arbitrary: item }, junk), { maxLength: 5 }) }, item, junk);
const strList = listOf(anyText);

const stringMap = fc.oneof(
  { weight: 5, arbitrary: fc.dictionary(text, fc.oneof({ weight: 5, arbitrary: anyText }, junk), { maxKeys: 4 }) },
  junk,
);

/** Entry with its spec fields (each optional) plus unknown sub-fields (including `__proto__`). */
const entry = (fields: Record<string, Arb>): Arb<Record<string, unknown>> =>
  fc
    .tuple(
      fc.record(fields, { requiredKeys: [] }),
      fc.dictionary(fc.constantFrom('extra', 'note', '__proto__', 'constructor'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
    )
    .map(([known, unknown]) => ({ ...unknown, ...known }));

/** A list of objects: mostly a list, sometimes a lone object, with non-object items. */
const objList = (e: Arb): Arb =>
  fc.oneof({ weight: 6, arbitrary: fc.array(fc.oneof({ weight: 8, arbitrary: e }, scalar), { maxLength: 4 }) }, e, scalar);

const alertContext = fc.oneof(
  {
    weight: 6,
    arbitrary: entry({
      dest_ip: strish,
      dest_port: intish,
      hostname: strish,
      protocol: strish,
      src_ip: strish,
      src_port: intish,
      url: strish,
    }),
  },
  fc.array(entry({ dest_ip: text }), { maxLength: 2 }),
  junk,
);
const idsAlert = entry({
  alert_context: alertContext,
  alert_severity: fc.oneof(fc.constantFrom('high', 'medium', 'low', 'info'), junk),
  rule_category: strish,
  rule_id: fc.oneof(text, fc.integer({ min: 1, max: 9_999_999 })),
  rule_msg: strish,
  rule_source: strish,
});

const eventMap = fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof({ weight: 5, arbitrary: anyText }, junk), { maxKeys: 4 });
const matchContext = fc.oneof(
  fc.array(fc.record({ values: eventMap }), { maxLength: 3 }),
  fc.record({ values: fc.array(eventMap, { maxLength: 3 }) }),
  fc.record({ values: eventMap }),
  fc.array(eventMap, { maxLength: 3 }),
  fc.array(fc.oneof(fc.record({ values: eventMap, stray: text }), eventMap, scalar), { maxLength: 3 }),
  junk,
);
const sigmaResult = entry({
  rule_title: strish,
  rule_source: strish,
  match_context: matchContext,
  rule_level: fc.constantFrom('critical', 'high', 'medium', 'low'),
  rule_description: strish,
  rule_author: strish,
  rule_id: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('a1b2', 'A1B2', 'c3d4', 'e5f6') },
    text.map((s) => ` ${s} `),
    fc.constant(''),
    junk,
  ),
});

const authors = fc.oneof(
  fc.array(text, { maxLength: 3 }),
  fc.dictionary(text, fc.oneof(text, fc.array(fc.oneof(text, fc.array(text, { maxLength: 2 })), { maxLength: 2 })), { maxKeys: 3 }),
  text,
  fc.array(fc.oneof(text, fc.array(text, { maxLength: 2 }), scalar), { maxLength: 3 }),
  junk,
);
const signatureMatch = entry({
  format: fc.constantFrom('SIG_FORMAT_UNKNOWN', 'SIG_FORMAT_YARA', 'SIG_FORMAT_SIGMA', 'SIG_FORMAT_CAPA', 'SIG_FORMAT_OPENIOC'),
  authors,
  rule_src: strish,
  name: strish,
  description: strish,
});

/** Process node of at most `depth` further levels; `time_offset` mostly on children only. */
function processNode(depth: number, isChild: boolean): Arb<Record<string, unknown>> {
  const fields: Record<string, Arb> = {
    name: strish,
    process_id: fc.oneof(fc.integer({ min: 0, max: 65535 }).map(String), fc.integer({ min: 0, max: 65535 }), junk),
  };
  if (isChild) fields.time_offset = intish;
  if (depth > 0) {
    const child = processNode(depth - 1, true);
    fields.children = fc.oneof(
      { weight: 5, arbitrary: fc.array(fc.oneof({ weight: 6, arbitrary: child }, scalar), { maxLength: 3 }) },
      child,
      junk,
    );
  }
  return entry(fields);
}

const tls = entry({
  issuer: stringMap,
  subject: stringMap,
  ja3: hashish,
  ja3s: hashish,
  serial_number: strish,
  sni: strish,
  thumbprint: hashish,
  version: fc.constantFrom('TLS 1.2', 'TLS 1.3'),
});

/** Attributes: every spec'd attribute (each optional), variants, junk, plus unknown attributes. */
export const attributesArb: Arb<Record<string, unknown>> = fc
  .tuple(
    fc.record(
      {
        analysis_date: intish,
        last_modification_date: intish,
        sandbox_name: fc.oneof(sandboxBase, anyText, junk),
        behash: fc.oneof(hexN(32), anyText, junk),
        hosts_file: strish,
        verdict_confidence: intish,
        has_html_report: boolish,
        has_evtx: boolish,
        has_memdump: boolish,
        has_pcap: boolish,
        calls_highlighted: strList,
        command_executions: strList,
        files_opened: strList,
        files_written: strList,
        processes_created: strList,
        mutexes_created: strList,
        verdicts: strList,
        tags: strList,
        registry_keys_opened: strList,
        permissions_requested: strList,
        ja3_digests: listOf(hashish),
        files_copied: objList(entry({ source: strish, destination: strish })),
        files_dropped: objList(entry({ path: strish, sha256: hashish })),
        dns_lookups: objList(entry({ hostname: strish, resolved_ips: strList })),
        http_conversations: objList(entry({ request_headers: stringMap, request_method: fc.constantFrom('GET', 'POST'), url: strish })),
        ip_traffic: objList(
          entry({ destination_ip: strish, destination_port: intish, transport_layer_protocol: fc.constantFrom('TCP', 'UDP') }),
        ),
        tls: objList(tls),
        ids_alerts: objList(idsAlert),
        ids_results: objList(idsAlert),
        sigma_analysis_results: objList(sigmaResult),
        signature_matches: objList(signatureMatch),
        mitre_attack_techniques: objList(entry({ signature_description: strish, id: fc.constantFrom('T1055', 'T1082'), severity: strish })),
        processes_tree: objList(processNode(3, false)),
        registry_keys_set: objList(entry({ key: strish, value: fc.oneof(text, fc.constant(null), fc.integer()) })),
        shared_preferences_sets: objList(entry({ key: strish, value: strish })),
        system_property_sets: objList(entry({ key: strish, value: strish })),
        content_model_sets: objList(fc.dictionary(text, fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 })),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  )
  .map(([known, unknown]) => ({ ...unknown, ...known }));

const contextAttributes = entry({
  file_md5: hexN(32),
  file_sha1: hexN(40),
  file_type_tag: fc.constantFrom('peexe', 'android', 'pdf'),
  html_report: fc.webUrl(),
  pcap: fc.webUrl(),
  evtx: fc.webUrl(),
  memdump: fc.webUrl(),
});

/** A valid-ish record: identity valid, attributes anything spec-shaped; sometimes `{data}`-wrapped. */
export const recordArb: Arb<Record<string, unknown>> = fc
  .tuple(
    fc.record(
      {
        type: fc.constant('file_behaviour'),
        id: behaviourId,
        attributes: attributesArb,
        links: fc.record({ self: fc.webUrl() }),
        context_attributes: fc.oneof({ weight: 4, arbitrary: contextAttributes }, junk),
        relationships: fc.oneof(fc.dictionary(text, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }), junk),
      },
      { requiredKeys: ['id'] },
    ),
    fc.boolean(),
  )
  .map(([r, wrap]) => (wrap ? { data: r } : r));

/** Records whose known attributes hold arbitrary JSON (the harshest input for the coercers). */
export const junkAttributesRecordArb: Arb<Record<string, unknown>> = fc
  .tuple(behaviourId, fc.dictionary(fc.constantFrom(...KNOWN_ATTRIBUTES), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 8 }))
  .map(([id, attributes]) => ({ id, attributes }));
