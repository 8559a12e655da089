import assert from 'node:assert/strict';
import { test } from 'vitest';
import { operationLabel, QuotaLedger } from '../../src/quota/index.js';
import { createRedis } from '../../src/queue/index.js';
import { cleanup, testRedisUrl, uniquePrefix } from '../support/env.js';

const label = (method: string, path: string): string => operationLabel({ op: 'api', method, path, user: 'u', at: new Date() });

test('ledger labels are route templates: no user id, hash, behaviour id, minute or token in them', () => {
  const sha = 'ab'.repeat(32);
  const cases: [string, string, string][] = [
    ['GET', '/users/bar-lookup/overall_quotas', 'GET /users/{id}/overall_quotas'],
    ['GET', '/api/v3/users/alice@example.com/api_usage?start_date=20261101', 'GET /users/{id}/api_usage'],
    ['GET', `/users/${encodeURIComponent('soc team')}/overall_quotas`, 'GET /users/{id}/overall_quotas'],
    ['GET', `/files/${sha}/behaviours?limit=40&cursor=abc`, 'GET /files/{id}/behaviours'],
    ['GET', `/files/${'c'.repeat(32)}`, 'GET /files/{id}'],
    ['GET', '/files/analyses/NjY0MjRlOTFj', 'GET /files/analyses/{id}'],
    ['POST', `/files/${sha}/analyse`, 'POST /files/{id}/analyse'],
    ['GET', '/analyses/u-1234-abcd', 'GET /analyses/{id}'],
    ['GET', `/file_behaviours/${encodeURIComponent(`${sha}_VirusTotal Jujubox`)}`, 'GET /file_behaviours/{id}'],
    ['GET', `/file_behaviours/${sha}_Zenbox/attack_techniques?limit=10`, 'GET /file_behaviours/{id}/attack_techniques'],
    ['GET', `/file_behaviours/${sha}_Zenbox/relationships/file`, 'GET /file_behaviours/{id}/relationships/file'],
    ['GET', `/file_behaviours/${sha}_Zenbox/memdump`, 'GET /file_behaviours/{id}/memdump'],
    ['GET', `/private/files/${sha}`, 'GET /private/files/{id}'],
    ['GET', '/feeds/file_behaviours/202611010000', 'GET /feeds/file_behaviours/{id}'],
    ['GET', '/feeds/file_behaviours/hourly/2026110100', 'GET /feeds/file_behaviours/hourly/{id}'],
    ['GET', 'https://www.virustotal.com/api/v3/feeds/file_behaviours/dG9rZW4/pcap', 'GET /feeds/file_behaviours/{token}/pcap'],
    ['GET', '/feeds/file_behaviours/{token}/link', 'GET /feeds/file_behaviours/{token}/link'],
  ];
  for (const [method, path, want] of cases) assert.equal(label(method, path), want, `${method} ${path}`);
  assert.equal(operationLabel({ op: 'ioc_delta', ioc_count: 3, user: 'u', at: new Date() } as never), 'ioc_delta');
});

test('quota reads of different users share one ledger label, still per user in the ledger rows', async () => {
  const redis = createRedis(await testRedisUrl(), { redisCluster: false });
  cleanup(() => redis.disconnect());
  const ledger = new QuotaLedger(redis, uniquePrefix());
  for (const user of ['bar-lookup', 'alice', 'bar-lookup'])
    await ledger.record({ op: 'api', method: 'GET', path: `/users/${user}/overall_quotas`, user });
  const rows = await ledger.usage({ period: 'day' });
  assert.deepEqual(
    rows.map((r) => [r.id, r.operations]),
    [
      ['alice', { 'GET /users/{id}/overall_quotas': { calls: 1, units: {} } }],
      ['bar-lookup', { 'GET /users/{id}/overall_quotas': { calls: 2, units: {} } }],
    ],
  );
  assert.deepEqual(
    (await ledger.audit()).map((e) => e.op),
    ['GET /users/{id}/overall_quotas', 'GET /users/{id}/overall_quotas', 'GET /users/{id}/overall_quotas'],
  );
});
