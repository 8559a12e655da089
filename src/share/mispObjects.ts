import { isIP } from 'node:net';
import { v5 as uuidv5 } from 'uuid';
import type { BehaviourDoc } from '../normalize/index.js';
import { SANDTRAIL_NAMESPACE } from './stixIds.js';
import { domainValue, records, resultOf, strings, urlValue } from './reportValues.js';

/** A MISP attribute as the event JSON carries it. */
export interface MispAttribute {
  uuid: string;
  type: string;
  category: string;
  value: string;
  to_ids: boolean;
  timestamp: string;
  comment?: string;
  object_relation?: string;
}

/** A MISP object (one of MISP's object templates) with its attributes and references. */
export interface MispObject {
  uuid: string;
  name: string;
  'meta-category': string;
  timestamp: string;
  comment?: string;
  Attribute: MispAttribute[];
  ObjectReference?: { uuid: string; referenced_uuid: string; relationship_type: string; timestamp: string }[];
}

/** A deterministic MISP uuid: the same content gives the same uuid, so MISP updates instead of duplicating. */
export function mispUuid(key: string): string {
  return uuidv5(`misp\u0000${key}`, SANDTRAIL_NAMESPACE);
}

type Attrs = Record<string, unknown>;

/**
 * The MISP content of one behaviour report, with MISP's own object templates and attribute types:
 * - objects: the analysed `file`, a `sandbox-report` per report (referencing the file and what the
 *   report saw), `domain-ip` per DNS lookup, `network-connection` per destination, `file` per
 *   dropped file;
 * - attributes: mutexes, registry keys, URLs, JA3 fingerprints, the behash, sigma rules and
 *   ATT&CK techniques (the last three as `text`, MISP having no type for them).
 * Indicators (`to_ids`) only come from a malicious or suspicious report.
 */
export function mispOf(doc: BehaviourDoc): { objects: MispObject[]; attributes: MispAttribute[] } {
  const a = (doc.attributes ?? {}) as Attrs;
  const ctx = (doc.context_attributes ?? {}) as Attrs;
  const timestamp = String(doc.last_modification_date);
  const verdicts = strings(a.verdicts);
  const result = resultOf(verdicts);
  const toIds = result === 'malicious' || result === 'suspicious';
  const attr = (
    key: string,
    type: string,
    category: string,
    value: string,
    extra: { relation?: string; comment?: string; ids?: boolean } = {},
  ): MispAttribute => ({
    uuid: mispUuid(`attribute\u0000${key}\u0000${type}\u0000${extra.relation ?? ''}\u0000${value}`),
    type,
    category,
    value,
    to_ids: extra.ids ?? false,
    timestamp,
    ...(extra.relation ? { object_relation: extra.relation } : {}),
    ...(extra.comment ? { comment: extra.comment } : {}),
  });
  const objects: MispObject[] = [];
  const object = (name: string, metaCategory: string, key: string, attributes: MispAttribute[]): MispObject => {
    const o: MispObject = {
      uuid: mispUuid(`object\u0000${name}\u0000${key}`),
      name,
      'meta-category': metaCategory,
      timestamp,
      Attribute: attributes,
    };
    objects.push(o);
    return o;
  };

  // the analysed file: one object per sample, whichever report names it
  const fileKey = `sample\u0000${doc.sha256}`;
  const hashes = [attr(fileKey, 'sha256', 'Payload delivery', doc.sha256, { relation: 'sha256', ids: toIds })];
  if (typeof ctx.file_md5 === 'string' && /^[0-9a-f]{32}$/.test(ctx.file_md5)) {
    hashes.push(attr(fileKey, 'md5', 'Payload delivery', ctx.file_md5, { relation: 'md5', ids: toIds }));
  }
  if (typeof ctx.file_sha1 === 'string' && /^[0-9a-f]{40}$/.test(ctx.file_sha1)) {
    hashes.push(attr(fileKey, 'sha1', 'Payload delivery', ctx.file_sha1, { relation: 'sha1', ids: toIds }));
  }
  const sample = object('file', 'file', fileKey, hashes);

  const reportKey = `report\u0000${doc.id}`;
  const reportAttrs = [
    // the feed's sandboxes run as VirusTotal's service: a SaaS sandbox, named as the feed names it
    attr(reportKey, 'text', 'Other', 'saas', { relation: 'sandbox-type' }),
    attr(reportKey, 'text', 'Other', doc.sandbox_name, { relation: 'saas-sandbox' }),
    attr(reportKey, 'text', 'External analysis', verdicts.length ? `${result}: ${verdicts.join(', ')}` : result, { relation: 'results' }),
    attr(reportKey, 'link', 'External analysis', `https://www.virustotal.com/gui/file/${doc.sha256}/behavior`, { relation: 'permalink' }),
  ];
  const report = object('sandbox-report', 'misc', reportKey, reportAttrs);
  report.comment = `behaviour ${doc.id}`;
  const refs: NonNullable<MispObject['ObjectReference']> = [];
  const reference = (target: MispObject, type: string): void => {
    refs.push({
      uuid: mispUuid(`reference\u0000${report.uuid}\u0000${type}\u0000${target.uuid}`),
      referenced_uuid: target.uuid,
      relationship_type: type,
      timestamp,
    });
  };
  reference(sample, 'describes');

  for (const d of records(a.dns_lookups)) {
    const domain = domainValue(d.hostname);
    if (!domain) continue;
    const key = `dns\u0000${domain}`;
    const ips = strings(d.resolved_ips).filter((ip) => isIP(ip) !== 0);
    const o = object('domain-ip', 'network', `${key}\u0000${ips.join(',')}`, [
      attr(key, 'domain', 'Network activity', domain, { relation: 'domain', ids: toIds }),
      ...ips.map((ip) => attr(key, 'ip-dst', 'Network activity', ip, { relation: 'ip', ids: toIds })),
    ]);
    reference(o, 'communicates-with');
  }
  for (const t of records(a.ip_traffic)) {
    const ip = typeof t.destination_ip === 'string' ? t.destination_ip.trim() : '';
    if (isIP(ip) === 0) continue;
    const port = Number.isInteger(t.destination_port) ? String(t.destination_port) : undefined;
    const proto = typeof t.transport_layer_protocol === 'string' ? t.transport_layer_protocol.trim().toUpperCase() : '';
    const key = `flow\u0000${ip}\u0000${port ?? ''}\u0000${proto}`;
    const o = object('network-connection', 'network', key, [
      attr(key, 'ip-dst', 'Network activity', ip, { relation: 'ip-dst', ids: toIds }),
      ...(port ? [attr(key, 'port', 'Network activity', port, { relation: 'dst-port' })] : []),
      ...(/^(TCP|UDP|ICMP|SCTP)$/.test(proto) ? [attr(key, 'text', 'Network activity', proto, { relation: 'layer4-protocol' })] : []),
    ]);
    reference(o, 'connects-to');
  }
  for (const f of records(a.files_dropped)) {
    const sha = typeof f.sha256 === 'string' ? f.sha256.toLowerCase() : '';
    if (!/^[0-9a-f]{64}$/.test(sha)) continue;
    const name = typeof f.path === 'string' ? f.path.split(/[\\/]/).pop() : undefined;
    const key = `dropped\u0000${sha}\u0000${name ?? ''}`;
    const o = object('file', 'file', key, [
      attr(key, 'sha256', 'Payload delivery', sha, { relation: 'sha256', ids: toIds }),
      ...(name ? [attr(key, 'filename', 'Payload delivery', name, { relation: 'filename' })] : []),
    ]);
    reference(o, 'drops');
  }
  report.ObjectReference = refs;

  const attributes: MispAttribute[] = [];
  const top = (type: string, category: string, value: string, comment?: string, ids = false): void => {
    attributes.push(attr('top', type, category, value, { ...(comment ? { comment } : {}), ids }));
  };
  if (doc.pivots.behash) top('text', 'External analysis', doc.pivots.behash, 'behash (behaviour similarity hash)');
  for (const j of doc.pivots.ja3) top('ja3-fingerprint-md5', 'Network activity', j, 'JA3', toIds);
  for (const j of doc.pivots.ja3s) top('text', 'Network activity', j, 'JA3S (TLS server fingerprint)');
  for (const s of records(a.sigma_analysis_results)) {
    if (typeof s.rule_id !== 'string') continue;
    const title = typeof s.rule_title === 'string' ? `: ${s.rule_title}` : '';
    const level = typeof s.rule_level === 'string' ? ` (${s.rule_level})` : '';
    top('text', 'External analysis', s.rule_id, `sigma rule${level}${title}`);
  }
  for (const t of records(a.mitre_attack_techniques)) {
    if (typeof t.id === 'string' && /^T\d{4}(\.\d{3})?$/i.test(t.id.trim()))
      top('text', 'External analysis', t.id.trim().toUpperCase(), 'MITRE ATT&CK technique');
  }
  for (const m of strings(a.mutexes_created)) top('mutex', 'Artifacts dropped', m, undefined, toIds);
  const keys = new Set(
    records(a.registry_keys_set)
      .map((r) => r.key)
      .filter((k): k is string => typeof k === 'string' && k !== ''),
  );
  for (const k of keys) top('regkey', 'Persistence mechanism', k);
  for (const h of records(a.http_conversations)) {
    const u = urlValue(h.url);
    if (u) top('url', 'Network activity', u, undefined, toIds);
  }
  return { objects, attributes };
}
