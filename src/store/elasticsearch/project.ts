import { isIP } from 'node:net';
import type { BehaviourDoc } from '../../normalize/index.js';
import { hostOfUrl as hostOf } from '../rollupFile.js';

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

class Unique {
  private readonly seen = new Set<string>();
  constructor(private readonly lower: boolean) {}
  add(v: unknown): void {
    if (typeof v !== 'string') return;
    const s = this.lower ? v.trim().toLowerCase() : v.trim();
    if (s !== '' && this.seen.size < PROJECTION_LIST_CAP) this.seen.add(s);
  }
  addAll(vs: unknown): void {
    if (Array.isArray(vs)) for (const v of vs) this.add(v);
  }
  get size(): number {
    return this.seen.size;
  }
  toArray(): string[] {
    return [...this.seen];
  }
}

function objects(list: unknown): Record<string, unknown>[] {
  return Array.isArray(list)
    ? list.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x))
    : [];
}

/** Only syntactically valid addresses are projected into `ip` fields (the canonical document keeps everything). */
function addIp(set: Unique, v: unknown): void {
  if (typeof v === 'string' && isIP(v.trim()) !== 0) set.add(v);
}

/** The ECS fields derived from a canonical document; every value is also in the canonical document. */
export function ecsProjection(doc: BehaviourDoc): Record<string, unknown> {
  const a = (doc.attributes ?? {}) as Record<string, unknown>;
  const ctx = (doc.context_attributes ?? {}) as Record<string, unknown>;
  const p = doc.pivots;

  const md5 = typeof ctx.file_md5 === 'string' ? ctx.file_md5.toLowerCase() : undefined;
  const sha1 = typeof ctx.file_sha1 === 'string' ? ctx.file_sha1.toLowerCase() : undefined;

  const techniques = new Unique(true);
  for (const t of objects(a.mitre_attack_techniques)) techniques.add(t.id);

  const rules = new Unique(true);
  rules.addAll(p.sigma_rule_ids);
  for (const r of objects(a.ids_alerts)) rules.add(r.rule_id);

  const dnsNames = new Unique(true);
  const hosts = new Unique(true);
  const ips = new Unique(false);
  const destIps = new Unique(false);
  for (const d of objects(a.dns_lookups)) {
    dnsNames.add(d.hostname);
    hosts.add(d.hostname);
    if (Array.isArray(d.resolved_ips)) for (const r of d.resolved_ips) addIp(ips, r);
  }
  for (const t of objects(a.ip_traffic)) {
    addIp(destIps, t.destination_ip);
    addIp(ips, t.destination_ip);
  }
  for (const h of objects(a.http_conversations)) hosts.add(hostOf(h.url));
  const sni = new Unique(true);
  for (const t of objects(a.tls)) {
    sni.add(t.sni);
    hosts.add(t.sni);
  }
  for (const alert of objects(a.ids_alerts)) {
    const c = (alert.alert_context ?? {}) as Record<string, unknown>;
    addIp(destIps, c.dest_ip);
    addIp(ips, c.dest_ip);
    addIp(ips, c.src_ip);
    hosts.add(c.hostname);
    hosts.add(hostOf(c.url));
  }

  const hashes = new Unique(true);
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
  if (ja3 || ja3s || sni.size) {
    out.tls = {
      ...(ja3 || sni.size ? { client: { ...(ja3 ? { ja3 } : {}), ...(sni.size ? { server_name: sni.toArray() } : {}) } } : {}),
      ...(ja3s ? { server: { ja3s } } : {}),
    };
  }
  if (techniques.size) out.threat = { framework: 'MITRE ATT&CK', technique: { id: techniques.toArray() } };
  if (rules.size) out.rule = { id: rules.toArray() };
  if (dnsNames.size) out.dns = { question: { name: dnsNames.toArray() } };
  if (destIps.size) out.destination = { ip: destIps.toArray() };
  out.related = { hash: hashes.toArray(), ...(ips.size ? { ip: ips.toArray() } : {}), ...(hosts.size ? { hosts: hosts.toArray() } : {}) };
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

/** Removes the projection from a stored `_source`, giving back the canonical document. */
export function stripProjection(source: Record<string, unknown>): BehaviourDoc {
  for (const k of ECS_ROOTS) delete source[k];
  return source as unknown as BehaviourDoc;
}
