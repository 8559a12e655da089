import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'vitest';
import { checkRedis } from '../../src/queue/index.js';
import { RedisServer } from '../support/redisServer.js';

test('a Redis URL naming a server that speaks another protocol is REDIS_UNAVAILABLE saying so, not a client error to report', async () => {
  const http: Server = createServer((_req, res) => res.end('hi'));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `redis://127.0.0.1:${(http.address() as AddressInfo).port}`;
  try {
    await assert.rejects(checkRedis(url, { timeoutMs: 3000 }), (e: Error & { code?: string }) => {
      assert.equal(e.code, 'REDIS_UNAVAILABLE');
      assert.match(e.message, /^cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: the server there does not speak the Redis protocol/);
      assert.doesNotMatch(e.message, /Please report this/);
      return true;
    });
  } finally {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  }
});

test('refused credentials are REDIS_FORBIDDEN telling to check them, for one Redis and for a cluster URL list, never "start that node"', async () => {
  // an ACL user with a password (the default user stays open for the server's own start check)
  const redis = await RedisServer.start({ aof: false, args: ['--user', 'st', 'on', '>right-pw', '~*', '&*', '+@all'] });
  try {
    const one = `redis://st:wrong-pw@127.0.0.1:${redis.port}`;
    for (const [url, o] of [
      [one, {}],
      [`${one},${one}`, { redisCluster: true }],
    ] as const) {
      await assert.rejects(checkRedis(url, { timeoutMs: 3000, ...o }), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'REDIS_FORBIDDEN', e.message);
        assert.match(
          e.message,
          /refuses the credentials it was given \(WRONGPASS.*check the user and password of REDIS_URL, --redis-url or the config file's redisUrl/,
        );
        assert.doesNotMatch(e.message, /start that cluster node|wrong-pw/);
        return true;
      });
    }
  } finally {
    await redis.stop();
  }
});
