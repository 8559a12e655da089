import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { openStore, type WatchHit } from '../../src/store/index.js';
import { createLogger } from '../../src/log/index.js';
import { recordRetroHits } from '../../src/watch/index.js';
import { runCli } from '../support/cli.js';
import { cleanup, tempDir } from '../support/env.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';

const SHA = (c: string): string => c.repeat(64);
const JA3 = 'a0e9f5d64349fb13191bc781f81f42e1';

test('watch add (--retro, --json), list, hits, remove through the CLI; errors and exit codes; the webhook secret is never printed', async () => {
  const dir = tempDir();
  const storeFile = join(dir, 'store.db');
  // a store filled before any watch existed: two behaviours share the behash, a third the JA3, a fourth nothing
  const store = openStore(`sqlite:${storeFile}`);
  const docs = [
    makeDoc(SHA('a'), 'Zenbox', 1000, { behash: 'b1' }),
    makeDoc(SHA('b'), 'CAPE Sandbox', 2000, { behash: 'b1', tls: [{ ja3: JA3.toUpperCase() }] }),
    makeDoc(SHA('c'), 'Zenbox', 3000, { tls: [{ ja3: JA3 }] }),
    makeDoc(SHA('d'), 'Zenbox', 4000, { behash: 'b2' }),
  ];
  try {
    await store.sink.upsert(sinkDocs(docs));
  } finally {
    await store.close();
  }
  const posts: unknown[] = [];
  let goneBack = false;
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8').on('data', (s: string) => (text += s));
    // /gone/... refuses every hit for good (no retries), until it is back: its notifications are dead-lettered
    req.on('end', () =>
      req.url?.startsWith('/gone/') && !goneBack ? res.writeHead(410).end() : (posts.push(JSON.parse(text)), res.writeHead(200).end()),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // the webhooks are named in each process's configuration: the store keeps only their names
  const hooks = { SANDTRAIL_WEBHOOK_SOC: `${host}/hook/s3cr3t`, SANDTRAIL_WEBHOOK_GONE: `${host}/gone/s3cr3t` };
  const cli = (...args: string[]): ReturnType<typeof runCli> =>
    runCli(['--store', `sqlite:${storeFile}`, 'watch', ...args], { env: hooks });
  const file = join(dir, 'alerts', 'w.jsonl');
  const ids = [docs[0]!.id, docs[1]!.id, docs[2]!.id].sort();

  const add = await cli('add', 'cli-w', '--behash', 'B1', '--ja3', JA3, '--file', file, '--webhook', 'soc', '--retro', '--json');
  assert.equal(add.code, 0, add.stderr);
  const added = JSON.parse(add.stdout) as { watch: Record<string, unknown>; retro: unknown };
  assert.deepEqual(added.retro, { behaviours: 3, hits: 3, undelivered: 0, interrupted: false });
  assert.deepEqual(added.watch.conditions, [
    { kind: 'behash', value: 'b1' },
    { kind: 'ja3', value: JA3 },
  ]);
  assert.deepEqual(added.watch.notify, { file, webhook: 'soc' });
  assert.deepEqual((posts as WatchHit[]).map((h) => h.behaviourId).sort(), ids);
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  assert.equal(lines.length, 3);

  // a webhook that refuses: the hits are recorded, and the summary says their notifications were not delivered
  const refused = await cli('add', 'gone-w', '--behash', 'B1', '--webhook', 'gone', '--retro');
  assert.equal(refused.code, 0, refused.stderr);
  assert.match(
    refused.stdout,
    /^retro: 2 stored behaviours match, 2 new hits recorded; 2 notification\(s\) could not be delivered and were dead-lettered \(sandtrail dlq list --stage watch --store sqlite:\S+\)$/m,
  );
  // the receiver is back: dlq replay sends the dead-lettered notifications again, and removes them
  goneBack = true;
  const before = posts.length;
  // a process that lacks the webhook's configuration keeps the notifications, saying which setting is missing
  const unconfigured = await runCli(['--store', `sqlite:${storeFile}`, 'dlq', 'replay', '--all', '--json']);
  assert.equal(unconfigured.code, 0, unconfigured.stderr);
  assert.equal((JSON.parse(unconfigured.stdout) as { redelivered: number }).redelivered, 0, unconfigured.stdout);
  const kept = await runCli(['--store', `sqlite:${storeFile}`, 'dlq', 'list', '--stage', 'watch', '--json']);
  assert.match(
    kept.stdout,
    /no webhook named \\"gone\\" in this process's configuration: set webhooks\.gone in its config file or SANDTRAIL_WEBHOOK_GONE=URL/,
  );
  const replay = await runCli(['--store', `sqlite:${storeFile}`, 'dlq', 'replay', '--all', '--json'], { env: hooks });
  assert.equal(replay.code, 0, replay.stderr);
  assert.deepEqual((JSON.parse(replay.stdout) as { redelivered: number; remaining: number }).redelivered, 2, replay.stdout);
  assert.equal(posts.length - before, 2);
  assert.equal((JSON.parse(replay.stdout) as { remaining: number }).remaining, 0);
  // a file under /proc can never be made: each notification fails at once (no endless mkdir), dead-lettered
  const proc = await cli('add', 'proc-w', '--behash', 'B1', '--file', '/proc/sandtrail-no-such-dir/w.jsonl', '--retro');
  assert.equal(proc.code, 0, proc.stderr);
  assert.match(proc.stdout, /2 notification\(s\) could not be delivered and were dead-lettered/);
  assert.equal((await cli('remove', 'proc-w')).code, 0);
  const text2 = await cli('add', 'quiet-w', '--behash', 'B1', '--retro');
  assert.match(text2.stdout, /^retro: 2 stored behaviours match, 2 new hits recorded$/m, 'no channel: nothing said notified');
  assert.equal((await cli('remove', 'gone-w')).code, 0);
  assert.equal((await cli('remove', 'quiet-w')).code, 0);

  const again = await cli('add', 'cli-w', '--sha256', SHA('a'));
  assert.equal(again.code, 1);
  assert.match(again.stderr, /a watch named "cli-w" exists already/);
  assert.equal((await cli('add', 'none', '--file', file)).code, 2, 'no condition');
  assert.equal((await cli('add', 'empty', '--behash', 'b1', '--file', '')).code, 2, 'an empty --file is not "record only"');
  // a webhook URL is refused, its secret unsaid: the store would keep it; so is a name not configured
  const byUrl = await cli('add', 'by-url', '--behash', 'b1', '--webhook', `${host}/hook/s3cr3t`);
  assert.equal(byUrl.code, 2, byUrl.stderr);
  assert.match(byUrl.stderr, /--webhook takes the name of a configured webhook, not its URL .*; configured: gone, soc/);
  const unknown = await cli('add', 'unknown', '--behash', 'b1', '--webhook', 'pager');
  assert.equal(unknown.code, 2, unknown.stderr);
  assert.match(unknown.stderr, /--webhook pager: no webhook of that name in this configuration/);
  // a --file that cannot take hits is refused before the watch is stored, as a bad --webhook is
  const onDir = await cli('add', 'on-dir', '--behash', 'b1', '--file', dir);
  assert.equal(onDir.code, 2, onDir.stderr);
  assert.match(onDir.stderr, /--file .* is a directory/);
  assert.doesNotMatch((await cli('list')).stdout, /on-dir/);
  // a store that does not exist yet is created for the watch, and the user is told
  const fresh = await runCli(['--store', `sqlite:${join(dir, 'typo.db')}`, 'watch', 'add', 'early', '--behash', 'b1']);
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.match(fresh.stderr, /no store at .*typo\.db yet: creating it/);
  assert.equal((await cli('add', 'bad', '--sha256', 'xyz')).code, 2, 'not a SHA-256');
  const two = await cli('add', 'two', '--sha256', SHA('d'), '--sha256', SHA('D'), '--ja3s', 'A'.repeat(32));
  assert.equal(two.code, 0, two.stderr);
  assert.match(two.stdout, /^watch two added: ja3s=a{32}, sha256=d{64}; notify: record only\n$/);

  const list = await cli('list', '--json');
  assert.equal(list.code, 0, list.stderr);
  const watches = JSON.parse(list.stdout) as { name: string; conditions: unknown[]; notify: unknown }[];
  assert.deepEqual(
    watches.map((w) => [w.name, w.notify]),
    [
      ['cli-w', { file, webhook: 'soc' }],
      ['two', {}],
    ],
  );
  // in the order of the flags in --help, duplicates (any case) once
  assert.deepEqual(watches[1]!.conditions, [
    { kind: 'ja3s', value: 'a'.repeat(32) },
    { kind: 'sha256', value: SHA('d') },
  ]);
  const text = await cli('list');
  assert.match(text.stdout, /^cli-w {2}behash=b1, ja3=a0e9f5d64349fb13191bc781f81f42e1 {2}\(file .*, webhook soc; since /m);

  const hits = await cli('hits', 'cli-w', '--json');
  assert.equal(hits.code, 0, hits.stderr);
  const listed = JSON.parse(hits.stdout) as WatchHit[];
  assert.deepEqual(listed.map((h) => h.behaviourId).sort(), ids);
  assert.ok(
    listed.every((h, k) => k === 0 || listed[k - 1]!.at >= h.at),
    'newest first',
  );
  assert.deepEqual(listed.find((h) => h.behaviourId === docs[1]!.id)?.matched, [
    { kind: 'behash', value: 'b1' },
    { kind: 'ja3', value: JA3 },
  ]);
  assert.equal((JSON.parse((await cli('hits', 'cli-w', '--json', '--limit', '1')).stdout) as unknown[]).length, 1);
  assert.equal((JSON.parse((await cli('hits', 'cli-w', '--json', '--since', '20000101')).stdout) as unknown[]).length, 3);
  assert.deepEqual(JSON.parse((await cli('hits', 'cli-w', '--json', '--since', '2999-01-01')).stdout), []);
  assert.equal((await cli('hits', 'cli-w', '--since', 'yesterday')).code, 2);
  // a time ago: the hits were recorded a moment ago, so within the last hour and not before a minute ago
  assert.equal((JSON.parse((await cli('hits', 'cli-w', '--json', '--since', '1h')).stdout) as unknown[]).length, 3);
  assert.equal((await cli('hits', 'cli-w', '--since', '24 hours')).code, 2);
  assert.match((await cli('hits', 'two')).stdout, /^no hits for two\n$/);

  const removed = await cli('remove', 'cli-w', '--json');
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(JSON.parse(removed.stdout), { removed: 'cli-w' });
  assert.equal((await cli('remove', 'cli-w')).code, 1);
  assert.equal((await cli('hits', 'cli-w')).code, 1);

  const help = await cli('add', '--help');
  assert.equal(help.code, 0);
  for (const flag of [
    '--behash',
    '--sigma-rule',
    '--ja3',
    '--ja3s',
    '--dropped-sha256',
    '--sha256',
    '--file',
    '--webhook',
    '--retro',
    '--json',
  ]) {
    assert.ok(help.stdout.includes(flag), flag);
  }
  for (const sub of ['list', 'remove', 'hits']) assert.equal((await cli(sub, '--help')).code, 0, sub);
  for (const out of [add, refused, byUrl, unknown, again, list, text, hits, removed])
    assert.ok(!`${out.stdout}${out.stderr}`.includes('s3cr3t'));
  // nor is it anywhere in the store's files
  for (const f of [storeFile, `${storeFile}-wal`]) if (existsSync(f)) assert.ok(!readFileSync(f).includes('s3cr3t'), f);
});

test('a webhook URL kept by a store written before webhooks were named: still delivered to, shown by host only, and named on stderr', async () => {
  const dir = tempDir();
  const storeFile = join(dir, 'old.db');
  const store = openStore(`sqlite:${storeFile}`);
  try {
    await store.sink.upsert(sinkDocs([makeDoc(SHA('e'), 'Zenbox', 1000, { behash: 'b9' })]));
  } finally {
    await store.close();
  }
  const posts: string[] = [];
  const server = createServer((req, res) => {
    posts.push(req.url ?? '');
    req.resume().on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // the row as an earlier version wrote it
  const db = new BetterSqlite3(storeFile);
  db.prepare('INSERT INTO watches (name, conditions, notify, created_at) VALUES (?, ?, ?, ?)').run(
    'old-w',
    JSON.stringify([{ kind: 'behash', value: 'b9' }]),
    JSON.stringify({ webhook: `${host}/old/s3cr3t` }),
    1,
  );
  db.close();
  const list = await runCli(['--store', `sqlite:${storeFile}`, 'watch', 'list']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`^old-w {2}behash=b9 {2}\\(webhook ${host.replace(/\./g, '\\.')}/\\*\\*\\*; since`, 'm'));
  assert.match(
    list.stderr,
    /old-w keeps a webhook URL in the store \(written by an earlier version; it often carries a secret\): remove and add again/,
  );
  const retro = await runCli([
    '--store',
    `sqlite:${storeFile}`,
    'watch',
    'add',
    'new-w',
    '--behash',
    'b9',
    '--webhook',
    `${host}/new/s3cr3t`,
  ]);
  assert.equal(retro.code, 2, 'a new watch names its webhook');
  // the notifier delivers to the stored URL as before
  const again = openStore(`sqlite:${storeFile}`);
  try {
    const old = await again.watches.get('old-w');
    assert.deepEqual(await recordRetroHits(again, old!, createLogger('silent')), {
      behaviours: 1,
      hits: 1,
      undelivered: 0,
      interrupted: false,
    });
  } finally {
    await again.close();
  }
  assert.deepEqual(posts, ['/old/s3cr3t']);
  for (const out of [list, retro]) assert.ok(!`${out.stdout}${out.stderr}`.includes('s3cr3t'));
});
