import { isIP } from 'node:net';
import type { BehaviourDoc } from '../normalize/index.js';
import { derivedId, scoId } from './stixIds.js';
import { equalsPattern, fileHashPath } from './stixPattern.js';
import { EXTENSION_ID, IDENTITY_ID } from './stixProducer.js';
import { domainValue, records, registryKey, resultOf, strings, urlValue } from './reportValues.js';

/** A STIX 2.1 object as written to a bundle. */
export type StixObject = Record<string, unknown> & { type: string; id: string };

type Attrs = Record<string, unknown>;

/** STIX timestamps: UTC, millisecond precision (RFC 3339). */
export function stixTime(epochSeconds: number): string {
  return new Date(epochSeconds * 1000).toISOString();
}

function ipObject(value: string): StixObject {
  const type = isIP(value) === 6 ? 'ipv6-addr' : 'ipv4-addr';
  return { type, spec_version: '2.1', id: scoId(type, { value }), value };
}

function technique(id: string): { id: string } | undefined {
  const m = /^T(\d{4})(?:\.(\d{3}))?$/.exec(id.trim().toUpperCase());
  return m ? { id: m[2] ? `T${m[1]}.${m[2]}` : `T${m[1]}` } : undefined;
}

/**
 * The STIX 2.1 objects of one behaviour report: the analysed file and its `malware` (a sample,
 * not a family), one `malware-analysis` for the report, the observables it saw (domains, IPs,
 * URLs, dropped files, mutexes, registry keys, processes), ATT&CK techniques as
 * `attack-pattern`s, indicators for what a malicious or suspicious report saw, and the
 * relationships between them. Ids are deterministic; a derived object's timestamps are those of
 * the report it comes from, and an export writes each id once (the first report wins).
 */
export function stixObjectsOf(doc: BehaviourDoc): StixObject[] {
  const a = (doc.attributes ?? {}) as Attrs;
  const ctx = (doc.context_attributes ?? {}) as Attrs;
  const when = doc.analysis_date ?? doc.last_modification_date;
  const created = stixTime(Math.min(when, doc.last_modification_date));
  const modified = stixTime(doc.last_modification_date);
  const common = { spec_version: '2.1', created_by_ref: IDENTITY_ID, created, modified: created };
  const out: StixObject[] = [];
  const observed: string[] = [];
  const add = (o: StixObject, ref = true): string => {
    out.push(o);
    if (ref) observed.push(o.id);
    return o.id;
  };
  const verdicts = strings(a.verdicts);
  const result = resultOf(verdicts);
  const flagged = result === 'malicious' || result === 'suspicious';
  const relate = (source: string, type: string, target: string): void => {
    const id = derivedId('relationship', `${source}|${type}|${target}`);
    out.push({ type: 'relationship', id, ...common, relationship_type: type, source_ref: source, target_ref: target });
  };

  // the sample
  const hashes: Record<string, string> = { 'SHA-256': doc.sha256 };
  if (typeof ctx.file_md5 === 'string' && /^[0-9a-f]{32}$/.test(ctx.file_md5)) hashes.MD5 = ctx.file_md5;
  if (typeof ctx.file_sha1 === 'string' && /^[0-9a-f]{40}$/.test(ctx.file_sha1)) hashes['SHA-1'] = ctx.file_sha1;
  const sample = add({ type: 'file', spec_version: '2.1', id: scoId('file', { hashes }), hashes }, false);
  const malware = derivedId('malware', doc.sha256);
  out.push({ type: 'malware', id: malware, ...common, is_family: false, sample_refs: [sample] });
  const indicate = (pattern: string, name: string, what: string): void => {
    if (!flagged) return;
    const id = derivedId('indicator', pattern);
    out.push({
      type: 'indicator',
      id,
      ...common,
      name,
      description: `${what} in a ${result} sandbox report of file ${doc.sha256}`,
      indicator_types: ['malicious-activity'],
      pattern,
      pattern_type: 'stix',
      pattern_version: '2.1',
      valid_from: created,
    });
    relate(id, 'indicates', malware);
  };
  indicate(equalsPattern(fileHashPath('SHA-256'), doc.sha256), `File ${doc.sha256}`, 'The analysed file');

  // network
  const ips = new Map<string, string>();
  const ipRef = (v: unknown): string | undefined => {
    if (typeof v !== 'string' || isIP(v.trim()) === 0) return undefined;
    const value = v.trim().toLowerCase();
    let id = ips.get(value);
    if (!id) {
      id = add(ipObject(value));
      ips.set(value, id);
      relate(malware, 'communicates-with', id);
      indicate(equalsPattern(`${isIP(value) === 6 ? 'ipv6-addr' : 'ipv4-addr'}:value`, value), `IP ${value}`, 'An address contacted');
    }
    return id;
  };
  const domains = new Set<string>();
  const domainRef = (host: unknown): string | undefined => {
    const value = domainValue(host);
    if (!value) return undefined;
    const id = scoId('domain-name', { value });
    if (!domains.has(value)) {
      domains.add(value);
      add({ type: 'domain-name', spec_version: '2.1', id, value });
      relate(malware, 'communicates-with', id);
      indicate(equalsPattern('domain-name:value', value), `Domain ${value}`, 'A domain looked up');
    }
    return id;
  };
  for (const d of records(a.dns_lookups)) {
    const domain = domainRef(d.hostname);
    for (const ip of strings(d.resolved_ips)) {
      const ipId = ipRef(ip);
      if (domain && ipId) relate(domain, 'resolves-to', ipId);
    }
  }
  for (const t of records(a.tls)) domainRef(t.sni);
  const urls = new Set<string>();
  for (const h of records(a.http_conversations)) {
    const value = urlValue(h.url);
    if (!value || urls.has(value)) continue;
    urls.add(value);
    const id = add({ type: 'url', spec_version: '2.1', id: scoId('url', { value }), value });
    relate(malware, 'communicates-with', id);
    indicate(equalsPattern('url:value', value), `URL ${value}`, 'A URL requested');
  }
  for (const t of records(a.ip_traffic)) ipRef(t.destination_ip);

  // host
  const files = new Set<string>();
  for (const f of records(a.files_dropped)) {
    const sha = typeof f.sha256 === 'string' ? f.sha256.toLowerCase() : '';
    if (!/^[0-9a-f]{64}$/.test(sha)) continue;
    const path = typeof f.path === 'string' ? f.path : '';
    const name = path.split(/[\\/]/).pop() || undefined;
    const contributing = { hashes: { 'SHA-256': sha }, ...(name ? { name } : {}) };
    const id = scoId('file', contributing);
    if (files.has(id)) continue;
    files.add(id);
    add({ type: 'file', spec_version: '2.1', id, ...contributing });
    relate(malware, 'drops', id);
    indicate(equalsPattern(fileHashPath('SHA-256'), sha), `Dropped file ${sha}`, 'A file dropped');
  }
  for (const name of strings(a.mutexes_created)) add({ type: 'mutex', spec_version: '2.1', id: scoId('mutex', { name }), name });
  const keys = new Set(
    records(a.registry_keys_set)
      .map((r) => r.key)
      .filter((k): k is string => typeof k === 'string' && k !== ''),
  );
  for (const raw of keys) {
    const key = registryKey(raw);
    add({ type: 'windows-registry-key', spec_version: '2.1', id: scoId('windows-registry-key', { key }), key });
  }
  for (const command_line of strings(a.command_executions)) {
    // a process has no id-contributing property: its id comes from the command line, in sandtrail's namespace
    add({ type: 'process', spec_version: '2.1', id: derivedId('process', command_line), command_line });
  }

  // behaviour
  const techniques = new Map<string, string>();
  for (const t of records(a.mitre_attack_techniques)) {
    const tech = typeof t.id === 'string' ? technique(t.id) : undefined;
    if (!tech || techniques.has(tech.id)) continue;
    const id = derivedId('attack-pattern', tech.id);
    techniques.set(tech.id, id);
    out.push({
      type: 'attack-pattern',
      id,
      ...common,
      name: tech.id,
      // no URL: STIX asks a hash of what a URL points to, and a web page has none that lasts
      external_references: [{ source_name: 'mitre-attack', external_id: tech.id }],
    });
    relate(malware, 'uses', id);
  }
  const sigma = records(a.sigma_analysis_results)
    .filter((s) => typeof s.rule_id === 'string')
    .map((s) => ({
      rule_id: s.rule_id as string,
      ...(typeof s.rule_title === 'string' ? { title: s.rule_title } : {}),
      ...(typeof s.rule_level === 'string' ? { level: s.rule_level } : {}),
    }));
  const p = doc.pivots;
  const analysis = derivedId('malware-analysis', doc.id);
  out.push({
    type: 'malware-analysis',
    id: analysis,
    spec_version: '2.1',
    created_by_ref: IDENTITY_ID,
    created,
    modified,
    product:
      doc.sandbox_name
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '-')
        .replace(/^-|-$/g, '') || 'unknown',
    ...(doc.analysis_date !== null ? { analysis_started: stixTime(doc.analysis_date) } : {}),
    result,
    ...(verdicts.length ? { result_name: verdicts.join(', ') } : {}),
    sample_ref: sample,
    ...(observed.length ? { analysis_sco_refs: observed } : {}),
    extensions: {
      [EXTENSION_ID]: {
        extension_type: 'property-extension',
        behaviour_id: doc.id,
        sandbox_name: doc.sandbox_name,
        ...(p.behash ? { behash: p.behash } : {}),
        ...(p.ja3.length ? { ja3: p.ja3 } : {}),
        ...(p.ja3s.length ? { ja3s: p.ja3s } : {}),
        ...(sigma.length ? { sigma_rules: sigma } : {}),
        ...(verdicts.length ? { verdicts } : {}),
      },
    },
  });
  relate(analysis, 'dynamic-analysis-of', malware);
  return out;
}
