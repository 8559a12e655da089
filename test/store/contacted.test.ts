import assert from 'node:assert/strict';
import { test } from 'vitest';
import { contactedOf, hostOfUrl } from '../../src/store/index.js';

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
