import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'vitest';
import { openStore, type WatchHit } from '../../src/store/index.js';
import { runCli, startCli } from '../support/cli.js';
import { cleanup, tempDir } from '../support/env.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';

const SHA = (k: number): string => k.toString(16).padStart(64, '0');

test('SIGINT during watch add --retro: the hits under way are notified, no other is recorded, and the same command resumes the rest', async () => {
  const dir = tempDir();
  const storeFile = join(dir, 'store.db');
  const docs = Array.from({ length: 40 }, (_, k) => makeDoc(SHA(k + 1), 'Zenbox', 1000 + k, { behash: 'b1' }));
  const store = openStore(`sqlite:${storeFile}`);
  try {
    await store.sink.upsert(sinkDocs(docs));
  } finally {
    await store.close();
  }
  // a slow receiver: each notification is answered after 300 ms
  const posts: string[] = [];
  let firstPost: () => void = () => undefined;
  const firstSeen = new Promise<void>((resolve) => (firstPost = resolve));
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (s: string) => (text += s));
    req.on('end', () => {
      firstPost();
      setTimeout(() => (posts.push((JSON.parse(text) as WatchHit).behaviourId), res.writeHead(204).end()), 300);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const args = ['--store', `sqlite:${storeFile}`, 'watch', 'add', 'slow', '--behash', 'b1'];
  const webhook = ['--webhook', 'slow_hook', '--retro'];
  const env = { SANDTRAIL_WEBHOOK_SLOW_HOOK: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };

  const { child, exited } = startCli([...args, ...webhook], { SANDTRAIL_LOG_LEVEL: 'warn', ...env });
  await firstSeen;
  child.kill('SIGINT');
  const stopped = await exited;
  assert.equal(stopped.code, 130, stopped.stderr);
  assert.match(stopped.stderr, /stopping: the notifications under way finish/);
  assert.match(stopped.stdout, /retro interrupted: run the same watch add --retro again/);
  const recorded = Number(/(\d+) new hits recorded/.exec(stopped.stdout)?.[1]);
  assert.ok(recorded > 0 && recorded < docs.length, stopped.stdout);
  // every hit the stopped run recorded was notified before it exited
  assert.equal(posts.length, recorded);

  const resumed = await runCli([...args, ...webhook], { env });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, /watch slow exists as given: its retro run resumes/);
  assert.match(resumed.stdout, new RegExp(`${docs.length - recorded} new hits recorded and notified`));
  assert.deepEqual([...posts].sort(), docs.map((d) => d.id).sort(), 'each behaviour notified once over both runs');
  // other conditions or channels under the same name are still refused
  const other = await runCli([...args, '--behash', 'b2', '--retro'], { env });
  assert.equal(other.code, 1);
  assert.match(other.stderr, /a watch named "slow" exists already/);
});
