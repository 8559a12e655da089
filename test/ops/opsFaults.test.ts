import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { cleanup, tempDir } from '../support/env.js';
import { RedisServer } from '../support/redisServer.js';
import { startTestOps } from '../support/testOps.js';

const TOKEN = 'a-long-enough-test-token-91ab';

/** An operations server over queues on a Redis of the test's own (to freeze), and its store (to close). */
async function opsOnOwnRedis() {
  const redis = await RedisServer.start({ aof: false });
  cleanup(() => (redis.thaw(), redis.stop()));
  const { server, store } = await startTestOps(tempDir(), { token: TOKEN }, { redisUrl: redis.url });
  const get = (path: string): Promise<Response> => fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { redis, store, server, get };
}

test('a client sending its headers a byte at a time, or one waiting on a frozen Redis, does not hold the server open when it closes', async () => {
  const { redis, server, get } = await opsOnOwnRedis();
  const { hostname, port } = new URL(server.url);
  const slow = connect(Number(port), hostname);
  slow.on('error', () => undefined);
  cleanup(() => slow.destroy());
  const drip = setInterval(() => slow.write('X'), 200);
  cleanup(() => clearInterval(drip));
  slow.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ');
  redis.freeze();
  const waiting = get('/queues/api/queues').catch(() => undefined);
  await new Promise((r) => setTimeout(r, 300));
  const started = Date.now();
  await server.close();
  assert.ok(Date.now() - started < 3000, `close took ${Date.now() - started} ms`);
  await waiting;
});

test('the dashboard answers 503 when Redis does not answer; gauges read from a store that fails are left out, not frozen or 0', async () => {
  const { redis, store, get } = await opsOnOwnRedis();
  assert.match(await (await get('/metrics')).text(), /^sandtrail_dead_letters 0$/m);
  const started = Date.now();
  redis.freeze();
  const board = await get('/queues/api/queues');
  assert.equal(board.status, 503);
  assert.match(((await board.json()) as { error: string }).error, /Redis did not answer within 5 s/);
  assert.ok(Date.now() - started < 8000, `${Date.now() - started} ms`);
  redis.thaw();

  await store.close();
  const text = await (await get('/metrics')).text();
  for (const name of ['sandtrail_dead_letters', 'sandtrail_ingestion_lag_seconds', 'sandtrail_missing_minutes_consecutive']) {
    assert.doesNotMatch(text, new RegExp(`^${name} `, 'm'), `${name} has no sample`);
  }
  assert.match(text, /^sandtrail_process_cpu_user_seconds_total /m, "the process's own counters are still there");
  // liveness needs no credentials, whatever its query string
  assert.equal((await fetch(`${new URL((await get('/healthz')).url).origin}/healthz?probe=1`)).status, 200);
});

test('http.username without http.password (or the reverse) is a configuration error, not an open server', () => {
  for (const http of [{ username: 'ops' }, { password: 'long-enough-pw' }]) {
    assert.throws(
      () => loadConfig({ flags: { http } }),
      (e: { code: string; message: string }) =>
        e.code === 'CONFIG_INVALID' && /http\.username and http\.password go together/.test(e.message),
    );
  }
});
