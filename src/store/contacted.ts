import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * A host as hunters compare it: an IP address (IPv6 without its URL brackets), or a host name in
 * ASCII (an IDN as punycode), lower-case, of labels of letters, digits, `-` and `_`; undefined for
 * anything else (`bad'host]`, a path, a blank), which a report may hold but no host is.
 */
export function hostName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const h = value
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  if (h === '' || h.length > 253) return undefined;
  if (isIP(h) !== 0) return h.toLowerCase();
  const ascii = domainToASCII(h);
  if (ascii === '' || ascii.length > 253) return undefined;
  return ascii.split('.').every((l) => /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/.test(l)) ? ascii : undefined;
}

/**
 * Host of a URL as hunters compare it (lower-case); undefined when it names none. A scheme-less
 * `host/path` counts only when its first segment looks like a host (a dot, a port, an address):
 * a path (`/gate.php`) or a relative one (`api/v1`) names no host, whatever a URL parser would
 * make of it (`http:///gate.php` parses with the host `gate.php`).
 */
export function hostOfUrl(url: unknown): string | undefined {
  if (typeof url !== 'string') return undefined;
  const u = url.trim();
  if (u === '' || u.startsWith('/')) return undefined;
  if (!u.includes('://')) {
    const first = u.split(/[/?#]/)[0] ?? '';
    if (!/[.:]/.test(first) && isIP(first) === 0) return undefined;
  }
  try {
    return hostName(new URL(u.includes('://') ? u : `http://${u}`).hostname);
  } catch {
    return undefined;
  }
}

/** The network indicators of one report, each list unique, trimmed and lower-case, in the report's order. */
export interface Contacted {
  /** `dns_lookups[].hostname`. */
  dnsNames: string[];
  /** `tls[].sni`. */
  sni: string[];
  /** Every host name: DNS names, the hosts of HTTP URLs, SNI, and IDS alerts' host names and URLs. */
  hosts: string[];
  /** Addresses the sample resolved or reached: DNS answers, `ip_traffic`, IDS alerts' destinations. */
  ips: string[];
  /** Addresses it reached: `ip_traffic[].destination_ip` and IDS alerts' `dest_ip`. */
  destIps: string[];
  /** IDS alerts' `src_ip`. */
  srcIps: string[];
}

/** Insertion-ordered, trimmed, lower-case strings, at most `cap` of them; anything else is skipped. */
export class Unique {
  private readonly seen = new Set<string>();
  constructor(private readonly cap = Infinity) {}
  add(v: unknown): void {
    if (typeof v !== 'string') return;
    const s = v.trim().toLowerCase();
    if (s !== '' && this.seen.size < this.cap) this.seen.add(s);
  }
  addAll(vs: unknown): void {
    if (Array.isArray(vs)) for (const v of vs) this.add(v);
  }
  get size(): number {
    return this.seen.size;
  }
  /** Only host names and addresses (hostName): the canonical document keeps everything. */
  addHost(v: unknown): void {
    this.add(hostName(v));
  }
  /** Only syntactically valid addresses (the canonical document keeps everything). */
  addIp(v: unknown): void {
    if (typeof v === 'string' && isIP(v.trim()) !== 0) this.add(v);
  }
  toArray(): string[] {
    return [...this.seen];
  }
}

/** The object items of a list a report holds (anything else in it, or no list, is skipped). */
export function objects(list: unknown): Record<string, unknown>[] {
  return Array.isArray(list)
    ? list.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x))
    : [];
}

/**
 * The hosts and addresses a report names, read from the same fields for a file's roll-up and for
 * the Elasticsearch projection, so `file` and a search by `related.hosts` agree. At most `cap` per list.
 */
export function contactedOf(attributes: Record<string, unknown>, cap = Infinity): Contacted {
  const a = attributes;
  const dnsNames = new Unique(cap);
  const sni = new Unique(cap);
  const hosts = new Unique(cap);
  const ips = new Unique(cap);
  const destIps = new Unique(cap);
  const srcIps = new Unique(cap);
  for (const d of objects(a.dns_lookups)) {
    dnsNames.addHost(d.hostname);
    hosts.addHost(d.hostname);
    if (Array.isArray(d.resolved_ips)) for (const r of d.resolved_ips) ips.addIp(r);
  }
  for (const t of objects(a.ip_traffic)) {
    destIps.addIp(t.destination_ip);
    ips.addIp(t.destination_ip);
  }
  for (const h of objects(a.http_conversations)) hosts.add(hostOfUrl(h.url));
  for (const t of objects(a.tls)) {
    sni.addHost(t.sni);
    hosts.addHost(t.sni);
  }
  for (const alert of objects(a.ids_alerts)) {
    const c = (alert.alert_context ?? {}) as Record<string, unknown>;
    destIps.addIp(c.dest_ip);
    ips.addIp(c.dest_ip);
    srcIps.addIp(c.src_ip);
    hosts.addHost(c.hostname);
    // an alert's url is the request's path (its host is `hostname`), unless a proxy request gave it whole
    if (typeof c.url === 'string' && c.url.includes('://')) hosts.add(hostOfUrl(c.url));
  }
  return {
    dnsNames: dnsNames.toArray(),
    sni: sni.toArray(),
    hosts: hosts.toArray(),
    ips: ips.toArray(),
    destIps: destIps.toArray(),
    srcIps: srcIps.toArray(),
  };
}
