import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { writeFeed } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { cleanup, tempDir, uniquePrefix } from '../support/env.js';
import { RedisServer } from '../support/redisServer.js';

test("a library's console warning (BullMQ on an evicting Redis) joins a backfill's JSON log once, not as raw text", async () => {
  const dir = tempDir();
  await writeFeed({ out: join(dir, 'feed'), seed: 3, start: '202611010000', minutes: 2, perMinute: 5, malformedRate: 0 });
  // the last --maxmemory-policy given wins
  const redis = await RedisServer.start({ aof: false, args: ['--maxmemory-policy', 'allkeys-lru'] });
  cleanup(() => redis.stop());
  const r = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`, '--store', `sqlite:${join(dir, 's.db')}`], {
    env: { REDIS_URL: redis.url, SANDTRAIL_QUEUE_PREFIX: uniquePrefix() },
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.trim().split('\n').filter(Boolean);
  for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `not a JSON line: ${l}`);
  const eviction = lines.filter((l) => l.includes('Eviction policy is allkeys-lru'));
  assert.equal(eviction.length, 1, r.stderr);
  assert.equal((JSON.parse(eviction[0] as string) as { source: string }).source, 'library');
}, 60_000);

test("every command's library warnings join its log: ioredis's about a password the Redis does not ask for, from doctor", async () => {
  const redis = await RedisServer.start({ aof: false });
  cleanup(() => redis.stop());
  const r = await runCli(['doctor'], {
    env: { REDIS_URL: redis.url.replace('redis://', 'redis://:unasked@'), SANDTRAIL_LOG_LEVEL: 'warn' },
  });
  const lines = r.stderr.trim().split('\n').filter(Boolean);
  for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `not a JSON line: ${l}`);
  assert.ok(
    lines.some((l) => l.includes('does not require a password') && (JSON.parse(l) as { source: string }).source === 'library'),
    r.stderr,
  );
}, 60_000);
