import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/**
 * Starts one private redis-server for the whole run (vitest globalSetup); test processes find it
 * in SANDTRAIL_TEST_REDIS_URL (forked after this ran, they inherit the environment).
 */
export default async function setup(): Promise<() => Promise<void>> {
  if (process.env.SANDTRAIL_TEST_REDIS_URL) return async () => undefined;
  const bin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'].find(existsSync) ?? 'redis-server';
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sandtrail-test-redis-'));
  const redis = spawn(
    bin,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction'],
    { stdio: 'ignore' },
  );
  const failed = new Promise<never>((_, reject) =>
    redis.once('error', (e) => reject(new Error(`cannot start redis-server (${e.message}); install it: apt-get install redis-server`))),
  );
  const ready = (async () => {
    for (let i = 0; i < 200; i++) {
      const r = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
      if (r.stdout?.trim() === 'PONG') return;
      await sleep(25);
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  })();
  await Promise.race([ready, failed]);
  process.env.SANDTRAIL_TEST_REDIS_URL = `redis://127.0.0.1:${port}`;
  return async () => {
    redis.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
}
