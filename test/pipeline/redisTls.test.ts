import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, test } from 'vitest';
import { writeFeed, type FeedManifest } from '../../src/synth/index.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';
import { freePort, RedisServer } from '../support/redisServer.js';
import { storeContents } from '../support/storeContents.js';

/** Runs openssl, failing the suite with its message. */
function openssl(dir: string, ...args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, `openssl ${args.join(' ')}: ${r.stderr}`);
}

/** A CA of its own, and a server certificate for 127.0.0.1 it signed. */
function certificates(dir: string): void {
  for (const ca of ['ca', 'other-ca']) {
    openssl(
      dir,
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=${ca}`,
    );
  }
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'ext.cnf',
  );
}

let dir: string;
let port: number;
let server: ChildProcess;
let manifest: FeedManifest;
beforeAll(async () => {
  dir = tempDir();
  certificates(dir);
  port = await freePort();
  // TLS only: the plain port is off, as on a managed Redis
  server = spawn(
    'redis-server',
    ['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
      .concat(['--tls-cert-file', 'server.crt', '--tls-key-file', 'server.key', '--tls-ca-cert-file', 'ca.crt', '--tls-auth-clients', 'no'])
      .concat(['--maxmemory-policy', 'noeviction']),
    { cwd: dir, stdio: 'ignore' },
  );
  for (let i = 0; i < 200; i++) {
    const r = spawnSync('redis-cli', ['--tls', '--cacert', join(dir, 'ca.crt'), '-p', String(port), 'ping'], { encoding: 'utf8' });
    if (r.stdout?.trim() === 'PONG') break;
    await sleep(25);
  }
  manifest = await writeFeed({ out: join(dir, 'feed'), seed: 'tls', start: '202611050000', minutes: 3, perMinute: 30 });
});
afterAll(() => void server?.kill('SIGKILL'));

const envWith = (ca: string, store: string): NodeJS.ProcessEnv => ({
  REDIS_URL: `rediss://127.0.0.1:${port}`,
  SANDTRAIL_QUEUE_PREFIX: 'st-tls',
  SANDTRAIL_STORE: store,
  NODE_EXTRA_CA_CERTS: join(dir, ca),
});

test('over rediss:// with the CA given to Node (NODE_EXTRA_CA_CERTS), a backfill stores the feed exactly', async () => {
  const file = join(dir, 'tls.db');
  const r = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`, '--json'], { env: envWith('ca.crt', `sqlite:${file}`) });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual((JSON.parse(r.stdout) as { batches: Record<string, number> }).batches, {
    ok: 3,
    empty: 0,
    missing: 0,
    failed: 0,
    pending: 0,
  });
  assert.deepEqual(storeContents(file).ids, manifest.expectedIds);
});

test('over rediss:// with a wrong CA, backfill ends at start-up with one line naming the certificate and the fix', async () => {
  const started = Date.now();
  const r = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`], {
    env: envWith('other-ca.crt', `sqlite:${join(dir, 'wrong.db')}`),
  });
  assert.equal(r.code, 1);
  assert.ok(Date.now() - started < 20_000);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0] as string, /cannot reach Redis at rediss:\/\/127\.0\.0\.1.*certificate/);
  assert.match(lines[0] as string, /NODE_EXTRA_CA_CERTS/);
});

test('doctor over rediss:// with a wrong CA fails the Redis check with the certificate error and the fix', async () => {
  const r = await runCli(['doctor', '--json'], { env: envWith('other-ca.crt', `sqlite:${join(dir, 'doctor.db')}`) });
  const report = JSON.parse(r.stdout) as { checks: { id: string; status: string; detail: string; fix?: string }[] };
  const redis = report.checks.find((c) => c.id === 'redis');
  assert.equal(redis?.status, 'fail', r.stdout);
  assert.match(redis?.detail ?? '', /certificate/);
  assert.match(redis?.fix ?? '', /NODE_EXTRA_CA_CERTS/);
});

test('a Redis Cluster over TLS only (its bus too): a backfill through the rediss:// URLs of its nodes stores the feed exactly', async () => {
  const ports = await Promise.all([1, 2, 3].map(() => freePort()));
  const nodes = ports.map((p) =>
    spawn(
      'redis-server',
      ['--port', '0', '--tls-port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
        .concat([
          '--tls-cert-file',
          'server.crt',
          '--tls-key-file',
          'server.key',
          '--tls-ca-cert-file',
          'ca.crt',
          '--tls-auth-clients',
          'no',
        ])
        .concat([
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${p}.conf`,
          '--tls-cluster',
          'yes',
          '--maxmemory-policy',
          'noeviction',
        ]),
      { cwd: dir, stdio: 'ignore' },
    ),
  );
  const cli = (...args: string[]): string =>
    spawnSync('redis-cli', ['--tls', '--cacert', join(dir, 'ca.crt'), ...args], { encoding: 'utf8' }).stdout ?? '';
  try {
    for (const p of ports) for (let i = 0; i < 200 && cli('-p', String(p), 'ping').trim() !== 'PONG'; i++) await sleep(25);
    cli('--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes');
    for (let i = 0; i < 200 && !ports.every((p) => cli('-p', String(p), 'CLUSTER', 'INFO').includes('cluster_state:ok')); i++)
      await sleep(100);
    const file = join(dir, 'tls-cluster.db');
    const r = await runCli(['backfill', '--source', `dir:${join(dir, 'feed')}`, '--json'], {
      env: { ...envWith('ca.crt', `sqlite:${file}`), REDIS_URL: ports.map((p) => `rediss://127.0.0.1:${p}`).join(',') },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(storeContents(file).ids, manifest.expectedIds);
    const keys = ports.flatMap((p) => cli('-p', String(p), '--scan').split('\n').filter(Boolean));
    assert.ok(keys.length > 0 && keys.every((k) => k.startsWith('{st-tls}:')), 'every key under the hash-tagged prefix');
  } finally {
    for (const n of nodes) n.kill('SIGKILL');
  }
});

test('redis:// against a TLS-only port, and rediss:// against a plain one, fail in bounded time saying which scheme to use', async () => {
  const plain = await RedisServer.start({ aof: false });
  try {
    for (const [url, hint] of [
      [`redis://127.0.0.1:${port}`, /if this port serves TLS only \(a managed Redis, tls-port\), use rediss:\/\//],
      [plain.url.replace(/^redis:/, 'rediss:'), /rediss:\/\/ speaks TLS: if this port serves plain Redis, use redis:\/\//],
    ] as const) {
      const started = Date.now();
      const r = await runCli(['status'], { env: { ...envWith('ca.crt', `sqlite:${join(dir, 'tls.db')}`), REDIS_URL: url } });
      assert.equal(r.code, 1, r.stderr);
      assert.ok(Date.now() - started < 20_000, `${url}: ${Date.now() - started} ms`);
      assert.match(r.stderr, /cannot reach Redis at/);
      assert.match(r.stderr, hint, r.stderr);
    }
  } finally {
    await plain.stop();
  }
});
