import { publicIp } from './PivotPools.js';
import type { Attrs } from './hostActivity.js';
import { listLength, maybeUpper, type RecordContext } from './RecordContext.js';
import { hostname, urlOn } from './values.js';
import { vocab } from './vocab.js';

/**
 * DNS, HTTP, IP traffic and TLS observations. Hosts, IPs and JA3/JA3S come partly from the shared
 * pools so network pivots return several ids; the chosen hosts and IPs are left in the context for
 * the IDS and sigma builders to refer to.
 */
export function networkActivity(ctx: RecordContext, out: Attrs): void {
  const { rng } = ctx;
  const big = ctx.scale > 1;
  // About a third of real reports show no network activity at all.
  if (!big && rng.chance(0.35)) return;

  const nHosts = big ? Math.max(3, listLength(ctx, 1)) : rng.range(1, 5);
  const dns: Array<{ hostname: string; resolved_ips?: string[] }> = [];
  for (let i = 0; i < nHosts; i++) {
    const host = hostname(ctx);
    ctx.hosts.push(host);
    if (rng.chance(0.08)) {
      dns.push({ hostname: host }); // NXDOMAIN: no resolved_ips
      continue;
    }
    const ips: string[] = [];
    for (let k = rng.range(1, 3); k > 0; k--) ips.push(rng.chance(0.5) ? rng.pickSkewed(ctx.pools.c2Ips) : publicIp(rng));
    ctx.ips.push(...ips);
    dns.push({ hostname: host, resolved_ips: ips });
  }
  out.dns_lookups = dns;
  if (ctx.ips.length === 0) ctx.ips.push(rng.pickSkewed(ctx.pools.c2Ips));

  const nHttp = big ? listLength(ctx, 3) : rng.skewedInt(0, 4);
  if (nHttp > 0) {
    const convs: Attrs[] = [];
    for (let i = 0; i < nHttp; i++) {
      const host = rng.pick(ctx.hosts);
      const method = rng.chance(0.75) ? 'GET' : 'POST';
      const conv: Attrs = {
        url: urlOn(rng, host),
        request_method: method,
        request_headers: rng.chance(0.85)
          ? {
              'User-Agent': rng.pick(vocab.userAgents),
              Host: host,
              ...(method === 'POST'
                ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(rng.range(40, 4000)) }
                : {}),
              ...(rng.chance(0.3) ? { Connection: 'Keep-Alive', 'Cache-Control': 'no-cache' } : {}),
            }
          : { 'User-Agent': rng.pick(vocab.userAgents) },
      };
      if (rng.chance(0.6)) {
        // Not in the spec's table but present on real reports: kept by a lenient normalizer.
        conv.response_status_code = rng.pick([200, 200, 200, 301, 302, 404, 403, 500]);
        conv.response_headers = {
          'Content-Type': rng.pick(['text/html', 'application/octet-stream', 'application/json']),
          Server: rng.pick(['nginx', 'Apache/2.4.41 (Ubuntu)', 'cloudflare', 'Microsoft-IIS/10.0']),
        };
      }
      convs.push(conv);
    }
    out.http_conversations = convs;
  }

  const nIp = big ? listLength(ctx, 4) : rng.skewedInt(0, 8);
  if (nIp > 0) {
    const traffic: Attrs[] = [];
    for (let i = 0; i < nIp; i++) {
      traffic.push({
        destination_ip: rng.chance(0.8) ? rng.pick(ctx.ips) : publicIp(rng),
        destination_port: rng.pick(vocab.ports),
        transport_layer_protocol: rng.chance(0.85) ? 'TCP' : 'UDP',
      });
    }
    out.ip_traffic = traffic;
  }

  const nTls = big ? rng.range(2, 12) : rng.skewedInt(0, 3);
  const ja3: string[] = [];
  if (nTls > 0) {
    const tls: Attrs[] = [];
    for (let i = 0; i < nTls; i++) {
      const sni = rng.pick(ctx.hosts);
      const org = rng.pick(vocab.certOrgs);
      const j3 = maybeUpper(ctx, rng.pickSkewed(ctx.pools.ja3), 'upper_case_ja3');
      ja3.push(j3);
      tls.push({
        issuer: rng.chance(0.9)
          ? {
              C: rng.pick(['US', 'GB', 'RU', 'NL']),
              O: org,
              CN: rng.pick(['R3', 'E1', 'DigiCert Global G2 TLS RSA SHA256 2020 CA1', 'localhost', sni]),
            }
          : { CN: sni },
        subject: { CN: sni, ...(rng.chance(0.4) ? { O: org } : {}) },
        ja3: j3,
        ja3s: rng.pickSkewed(ctx.pools.ja3s),
        serial_number: rng.hex(rng.pick([16, 32, 36])),
        sni,
        thumbprint: rng.hex(40),
        version: rng.pick(vocab.tlsVersions),
      });
    }
    out.tls = tls;
  }
  // ja3_digests usually repeats the TLS entries' JA3s, sometimes lists one the TLS list lacks.
  if (ja3.length > 0 || rng.chance(0.1)) {
    const digests = [...new Set(ja3)];
    if (rng.chance(0.3)) digests.push(maybeUpper(ctx, rng.pickSkewed(ctx.pools.ja3), 'upper_case_ja3'));
    out.ja3_digests = digests;
  }
}
