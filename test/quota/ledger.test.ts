import assert from 'node:assert/strict';
import { test } from 'vitest';
import { createRedis } from '../../src/queue/index.js';
import { QuotaLedger } from '../../src/quota/index.js';
import { testRedisUrl, uniquePrefix } from '../support/env.js';

async function ledger(): Promise<{ l: QuotaLedger; close(): void }> {
  const redis = createRedis(await testRedisUrl(), { redisCluster: false });
  return { l: new QuotaLedger(redis, uniquePrefix()), close: () => redis.disconnect() };
}

test('feed batch reads are on record with their count and 0 API units, citing rule 3', async () => {
  const { l, close } = await ledger();
  try {
    const at = new Date('2026-11-21T10:15:30Z');
    for (const minute of ['202611210000', '202611210001', '202611210002']) {
      const c = await l.record({ op: 'api', method: 'GET', path: `/feeds/file_behaviours/${minute}`, user: 'alice', group: 'soc', at });
      assert.deepEqual(c.units, { api_requests: 0 });
      assert.deepEqual(c.rules, [3]);
    }
    await l.record({ op: 'api', method: 'GET', path: '/files/' + 'a'.repeat(64), user: 'alice', group: 'soc', at });
    const [day] = await l.usage({ period: 'day', at, user: 'alice' });
    assert.deepEqual(day?.units, { api_requests: 1 });
    assert.deepEqual(day?.operations['GET /feeds/file_behaviours/{id}'], { calls: 3, units: {} });
    assert.deepEqual(day?.operations['GET /files/{id}'], { calls: 1, units: { api_requests: 1 } });
    const [group] = await l.usage({ period: 'month', at, group: 'soc' });
    assert.deepEqual(group?.units, { api_requests: 1 });
    const audit = await l.audit(10);
    assert.equal(audit.length, 4);
    assert.equal(audit[3]?.op, 'GET /feeds/file_behaviours/{id}');
    assert.deepEqual(audit[3]?.rules, [3]);
  } finally {
    close();
  }
});

test('periods: minute and day buckets roll over at 00:00 UTC, months on the 1st', async () => {
  const { l, close } = await ledger();
  try {
    const call = (iso: string): Promise<unknown> => l.record({ op: 'api', method: 'GET', path: '/files/x', user: 'u', at: new Date(iso) });
    await call('2026-10-31T23:59:59Z');
    await call('2026-11-01T00:00:00Z');
    await call('2026-11-01T00:00:30Z');
    const units = async (period: 'minute' | 'day' | 'month', iso: string): Promise<number | undefined> =>
      (await l.usage({ period, at: new Date(iso), user: 'u' }))[0]?.units.api_requests;
    assert.equal(await units('minute', '2026-10-31T23:59:00Z'), 1);
    assert.equal(await units('minute', '2026-11-01T00:00:59Z'), 2);
    assert.equal(await units('day', '2026-10-31T12:00:00Z'), 1);
    assert.equal(await units('day', '2026-11-01T12:00:00Z'), 2);
    assert.equal(await units('month', '2026-10-15T00:00:00Z'), 1);
    assert.equal(await units('month', '2026-11-30T00:00:00Z'), 2);
  } finally {
    close();
  }
});

test('rule 6 state persists in the ledger: free lookups only for the uploader of that file', async () => {
  const { l, close } = await ledger();
  try {
    const sha = 'b'.repeat(64);
    await l.record({ op: 'file_upload', sha256: sha, known: false, analysis_id: 'an-1', user: 'up', group: 'g' });
    assert.deepEqual((await l.record({ op: 'api', method: 'GET', path: `/files/${sha.toUpperCase()}`, user: 'up' })).units, {
      api_requests: 0,
    });
    assert.deepEqual((await l.record({ op: 'api', method: 'GET', path: '/files/analyses/an-1', user: 'up' })).units, { api_requests: 0 });
    assert.deepEqual((await l.record({ op: 'api', method: 'GET', path: `/files/${sha}`, user: 'other' })).units, { api_requests: 1 });
    assert.deepEqual((await l.record({ op: 'api', method: 'GET', path: `/files/${'c'.repeat(64)}`, user: 'up' })).units, {
      api_requests: 1,
    });
  } finally {
    close();
  }
});

test('many workers recording at once lose no unit (real Redis, separate connections)', async () => {
  const url = await testRedisUrl();
  const prefix = uniquePrefix();
  const workers = 8;
  const perWorker = 150;
  const at = new Date('2026-11-21T12:00:00Z');
  const conns = Array.from({ length: workers }, () => createRedis(url, { redisCluster: false }));
  try {
    await Promise.all(
      conns.map(async (redis, w) => {
        const l = new QuotaLedger(redis, prefix);
        for (let i = 0; i < perWorker; i++) {
          // a mix of charged lookups, free feed reads and a stateful op that forces transaction retries
          if (i % 3 === 0)
            await l.record({
              op: 'api',
              method: 'GET',
              path: `/feeds/file_behaviours/2026112112${String(i % 60).padStart(2, '0')}`,
              user: 'shared',
              group: 'g',
              at,
            });
          else if (i % 10 === 1)
            await l.record({ op: 'livehunt_ruleset', ruleset_id: `rs-${w}-${i}`, rules: 2, active: true, user: 'shared', group: 'g', at });
          else await l.record({ op: 'api', method: 'GET', path: `/files/${w}-${i}`, user: 'shared', group: 'g', at });
        }
      }),
    );
    const l = new QuotaLedger(conns[0]!, prefix);
    let api = 0;
    let livehunt = 0;
    let feed = 0;
    for (let i = 0; i < perWorker; i++) {
      if (i % 3 === 0) feed++;
      else if (i % 10 === 1) livehunt += 2;
      else api++;
    }
    const [user] = await l.usage({ period: 'month', at, user: 'shared' });
    const [group] = await l.usage({ period: 'month', at, group: 'g' });
    for (const row of [user, group]) {
      assert.equal(row?.units.api_requests, api * workers);
      assert.equal(row?.units.livehunt, livehunt * workers);
      assert.equal(row?.operations['GET /feeds/file_behaviours/{id}']?.calls, feed * workers);
    }
    assert.equal((await l.audit(100_000)).length, workers * perWorker);
  } finally {
    conns.forEach((c) => c.disconnect());
  }
});
