import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';
import { runCli, startCli } from '../support/cli.js';
import { cleanup, tempDir } from '../support/env.js';

const NO_REDIS = { REDIS_URL: '', SANDTRAIL_REDIS_URL: '' };

async function storeFile(): Promise<string> {
  const file = join(tempDir(), 's.db');
  const store = openStore(`sqlite:${file}`);
  await store.sink.upsert(sinkDocs(makeDoc('a'.repeat(64), 'Zenbox', 1_790_000_000, { behash: 'b'.repeat(32) })));
  await store.close();
  return file;
}

test('serve: --port takes digits only; a second signal of either kind stops at once while a request is under way', async () => {
  const file = await storeFile();
  for (const port of ['1e3', '0x50', '', '70000']) {
    const r = await runCli(['serve', '--port', port, '--store', `sqlite:${file}`], { env: NO_REDIS });
    assert.equal(r.code, 2, `${port}: ${r.stderr}`);
    assert.match(r.stderr, /--port must be a port number/);
  }

  for (const [first, second] of [
    ['SIGINT', 'SIGTERM'],
    ['SIGTERM', 'SIGINT'],
  ] as const) {
    const cli = startCli(['serve', '--port', '0', '--store', `sqlite:${file}`], { ...NO_REDIS, SANDTRAIL_LOG_LEVEL: 'warn' });
    cleanup(() => cli.child.kill('SIGKILL'));
    let err = '';
    cli.child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    for (let i = 0; i < 200 && !/API base http:\/\/127\.0\.0\.1:(\d+)/.test(err); i++) await new Promise((r) => setTimeout(r, 50));
    const port = Number(/API base http:\/\/127\.0\.0\.1:(\d+)/.exec(err)?.[1]);
    assert.ok(port > 0, err);
    // a request sent in part: a first stop waits for it (5 s at most)
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET /api/v3/sandtrail/top/behash HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    socket.on('error', () => undefined);
    cli.child.kill(first);
    await new Promise((r) => setTimeout(r, 300));
    cli.child.kill(second);
    const r = await cli.exited;
    // 130 is the forced exit: a drain that had run its course (the request never completes) exits 0
    assert.equal(r.code, 130, `${first} then ${second}: exit ${r.code}, ${r.stderr}`);
    socket.destroy();
  }
});
