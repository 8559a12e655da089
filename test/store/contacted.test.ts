import assert from 'node:assert/strict';
import { test } from 'vitest';
import { contactedOf, hostName, hostOfUrl } from '../../src/store/index.js';

test('a URL names a host only when it has one: paths and relative references name none, whatever a URL parser would make of them', () => {
  assert.equal(hostOfUrl('http://C2.Example:8080/gate.php'), 'c2.example');
  assert.equal(hostOfUrl('c2.example/gate.php'), 'c2.example', 'scheme-less host/path');
  assert.equal(hostOfUrl('10.0.0.5/x'), '10.0.0.5');
  assert.equal(hostOfUrl('intranet:8080/x'), 'intranet');
  for (const path of ['/gate.php', '//', 'api', 'api/v1/upload', '', '   ', '/'])
    assert.equal(hostOfUrl(path), undefined, JSON.stringify(path));
});

test("an IDS alert's host is its hostname, not its url (the request's path); a proxy request's absolute url names its host", () => {
  const net = contactedOf({
    ids_alerts: [
      { alert_context: { hostname: 'Evil.Example', url: '/gate.php', dest_ip: '10.0.0.2' } },
      { alert_context: { url: 'api/v1/beacon' } },
      { alert_context: { url: 'http://proxied.example/x' } },
    ],
    http_conversations: [{ url: 'http://web.example/index.html' }, { url: '/relative/only' }],
  });
  assert.deepEqual(net.hosts, ['web.example', 'evil.example', 'proxied.example']);
});

test('hosts are host names or addresses: absolute and relative URLs, IPv6, no hostname, a bare path, junk', () => {
  assert.equal(hostOfUrl('http://[2001:DB8::1]:8443/x'), '2001:db8::1', 'IPv6 without its brackets');
  assert.equal(hostOfUrl('https://Bücher.example/a'), 'xn--bcher-kva.example', 'an IDN as punycode');
  assert.equal(hostOfUrl('../up/one'), undefined, 'relative');
  assert.equal(hostOfUrl('?q=1'), undefined);
  assert.equal(hostName("bad'host]"), undefined);
  assert.equal(hostName('-lead.example'), undefined);
  assert.equal(hostName('a..b'), undefined);
  assert.equal(hostName('x'.repeat(64) + '.example'), undefined, 'a label past 63 characters');
  assert.equal(hostName('Host.Example.'), 'host.example');
  assert.equal(hostName('[::1]'), '::1');
  const net = contactedOf({
    dns_lookups: [{ hostname: "bad'host]", resolved_ips: ['10.0.0.9'] }, { hostname: 'ok.example' }, { resolved_ips: ['10.0.0.8'] }],
    tls: [{ sni: 'sni.example' }, { sni: '/not a host' }],
    ids_alerts: [
      { alert_context: { hostname: '2001:db8::2', url: '/gate.php' } },
      { alert_context: { url: '/only/a/path' } },
      { alert_context: { hostname: '', url: 'http://[2001:db8::3]/x' } },
    ],
  });
  assert.deepEqual(net.dnsNames, ['ok.example']);
  assert.deepEqual(net.sni, ['sni.example']);
  assert.deepEqual(net.hosts, ['ok.example', 'sni.example', '2001:db8::2', '2001:db8::3']);
  assert.deepEqual(net.ips, ['10.0.0.9', '10.0.0.8']);
});
