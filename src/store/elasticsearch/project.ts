import type { BehaviourDoc } from '../../normalize/index.js';
import { contactedOf, objects, Unique } from '../contacted.js';

/**
 * Top-level keys of the ECS projection. The canonical document never has these keys at its top
 * level (its shape is fixed: schema_version, id, sha256, sandbox_name, dates, attributes,
 * context_attributes, relationships, pivots), so the sink adds them on write and removes exactly
 * them on read, and `get` returns the canonical document unchanged.
 */
export const ECS_ROOTS: readonly string[] = Object.freeze([
  '@timestamp',
  'event',
  'file',
  'tls',
  'threat',
  'rule',
  'dns',
  'destination',
  'related',
]);

/** Cap per projected list: a report with 50 000 contacted IPs keeps them in `_source`, not in `related.ip`. */
export const PROJECTION_LIST_CAP = 1000;

/** The ECS fields derived from a canonical document; every value is also in the canonical document. */
export function ecsProjection(doc: BehaviourDoc): Record<string, unknown> {
  const a = (doc.attributes ?? {}) as Record<string, unknown>;
  const ctx = (doc.context_attributes ?? {}) as Record<string, unknown>;
  const p = doc.pivots;

  const md5 = typeof ctx.file_md5 === 'string' ? ctx.file_md5.toLowerCase() : undefined;
  const sha1 = typeof ctx.file_sha1 === 'string' ? ctx.file_sha1.toLowerCase() : undefined;

  const techniques = new Unique(PROJECTION_LIST_CAP);
  for (const t of objects(a.mitre_attack_techniques)) techniques.add(t.id);

  const rules = new Unique(PROJECTION_LIST_CAP);
  rules.addAll(p.sigma_rule_ids);
  for (const r of objects(a.ids_alerts)) rules.add(r.rule_id);

  const net = contactedOf(a, PROJECTION_LIST_CAP);
  const relatedIps = [...new Set([...net.ips, ...net.srcIps])].slice(0, PROJECTION_LIST_CAP);

  const hashes = new Unique(PROJECTION_LIST_CAP);
  hashes.add(doc.sha256);
  hashes.add(md5);
  hashes.add(sha1);
  hashes.addAll(p.dropped_sha256);
  hashes.addAll(p.ja3);
  hashes.addAll(p.ja3s);
  if (p.behash) hashes.add(p.behash);

  const out: Record<string, unknown> = {
    '@timestamp': doc.analysis_date ?? doc.last_modification_date,
    event: { kind: 'event', category: ['malware'], dataset: 'gti.file_behaviour', module: 'sandtrail' },
    file: { hash: { sha256: doc.sha256, ...(md5 ? { md5 } : {}), ...(sha1 ? { sha1 } : {}) } },
  };
  const ja3 = p.ja3.length ? p.ja3.slice(0, PROJECTION_LIST_CAP) : undefined;
  const ja3s = p.ja3s.length ? p.ja3s.slice(0, PROJECTION_LIST_CAP) : undefined;
  const sni = net.sni;
  if (ja3 || ja3s || sni.length) {
    out.tls = {
      ...(ja3 || sni.length ? { client: { ...(ja3 ? { ja3 } : {}), ...(sni.length ? { server_name: sni } : {}) } } : {}),
      ...(ja3s ? { server: { ja3s } } : {}),
    };
  }
  if (techniques.size) out.threat = { framework: 'MITRE ATT&CK', technique: { id: techniques.toArray() } };
  if (rules.size) out.rule = { id: rules.toArray() };
  if (net.dnsNames.length) out.dns = { question: { name: net.dnsNames } };
  if (net.destIps.length) out.destination = { ip: net.destIps };
  out.related = {
    hash: hashes.toArray(),
    ...(relatedIps.length ? { ip: relatedIps } : {}),
    ...(net.hosts.length ? { hosts: net.hosts } : {}),
  };
  return out;
}

/**
 * The `_source` sent for a document: its canonical JSON (serialized once, by the feed stage)
 * with the projection appended, without serializing the document again.
 */
export function sourceJson(doc: BehaviourDoc, json: string = JSON.stringify(doc)): string {
  const canonical = json.trimEnd();
  const projection = JSON.stringify(ecsProjection(doc));
  if (!canonical.endsWith('}') || canonical === '{}') return JSON.stringify({ ...doc, ...ecsProjection(doc) });
  return `${canonical.slice(0, -1)},${projection.slice(1)}`;
}

/**
 * `sourceJson` as the bytes of a bulk request. The UTF-8 document a chunk carried is spliced as
 * it is: the index stage decodes it once to parse it, never encodes it again.
 */
export function sourceBytes(doc: BehaviourDoc, json: string | Buffer): Buffer {
  if (typeof json === 'string') return Buffer.from(sourceJson(doc, json));
  let end = json.length;
  // JSON's whitespace: space, tab, LF, CR
  while (end > 0 && [0x20, 0x09, 0x0a, 0x0d].includes(json[end - 1] as number)) end--;
  if (end < 3 || json[end - 1] !== 0x7d) return Buffer.from(sourceJson(doc, json.toString('utf8')));
  const projection = JSON.stringify(ecsProjection(doc));
  return Buffer.concat([json.subarray(0, end - 1), Buffer.from(`,${projection.slice(1)}`)]);
}

/** Removes the projection from a stored `_source`, giving back the canonical document. */
export function stripProjection(source: Record<string, unknown>): BehaviourDoc {
  for (const k of ECS_ROOTS) delete source[k];
  return source as unknown as BehaviourDoc;
}
