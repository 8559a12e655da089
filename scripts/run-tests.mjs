// Starts one private redis-server for the whole run (each test isolates itself with its own
// queue prefix and database file), then runs every test file with node's test runner.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function findTests(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? findTests(p) : p.endsWith('.test.ts') ? [p] : [];
  });
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer().once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const bin = ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'].find(existsSync) ?? 'redis-server';
const port = await freePort();
const dir = mkdtempSync(join(tmpdir(), 'sandtrail-test-redis-'));
const redis = spawn(
  bin,
  ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--maxmemory-policy', 'noeviction'],
  { stdio: 'ignore' },
);
redis.on('error', (e) => {
  console.error(`cannot start redis-server (${e.message}); install it: apt-get install redis-server`);
  process.exit(1);
});
for (let i = 0; i < 100; i++) {
  const r = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
  if (r.stdout?.trim() === 'PONG') break;
  await new Promise((res) => setTimeout(res, 50));
}

const args = process.argv.slice(2);
const files = args.length ? args : findTests('test').sort();
const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-timeout=300000', ...files], {
  stdio: 'inherit',
  env: { ...process.env, SANDTRAIL_TEST_REDIS_URL: `redis://127.0.0.1:${port}` },
});
const code = await new Promise((res) => child.on('exit', (c, s) => res(c ?? (s ? 1 : 0))));
redis.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
process.exit(code);
