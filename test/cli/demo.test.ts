import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import BetterSqlite3 from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'vitest';
import { baseEnv, builtCli, runCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

/** The words of a command line as a shell splits it (single quotes only, as the docs write them). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => (m[1] ?? m[2]) as string);
}

const DEMO_STORE = 'sqlite:.data/demo.db';

test('the demo prints commands that work pasted as written, and so do the README and hunting page sessions on its store', async () => {
  const store = `sqlite:${join(tempDir(), 'demo.db')}`;
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix() };
  const demo = await runCli(['demo', '--store', store], { env });
  assert.equal(demo.code, 0, demo.stderr);

  // every command it shows is one to paste: npx (sandtrail is not on the PATH of a clone) and the demo's store
  const shown = demo.stdout.split('\n').filter((l) => l.startsWith('$ '));
  assert.ok(shown.length >= 5, demo.stdout);
  for (const l of shown) assert.match(l, new RegExp(`^\\$ npx sandtrail .* --store ${store.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), l);
  // pasted, the first example prints the ids the demo listed under it
  const [first] = shown;
  const args = words((first as string).slice('$ npx sandtrail '.length));
  const pasted = await runCli(args, { env });
  assert.equal(pasted.code, 0, pasted.stderr);
  const listed = demo.stdout.split('\n').slice(demo.stdout.split('\n').indexOf(first as string) + 1);
  const ids = listed.slice(
    0,
    listed.findIndex((l) => !l.startsWith('  ') || l.startsWith('  ... ')),
  );
  assert.ok(ids.length > 0);
  assert.deepEqual(
    pasted.stdout.split('\n').slice(0, ids.length),
    ids.map((l) => l.trim()),
  );

  // the summary's pointer to the dead letters, pasted, lists them
  const hint = /\(see: sandtrail (dlq list [^)]*)\)/.exec(demo.stdout)?.[1];
  assert.ok(hint?.includes(`--store ${store}`), demo.stdout);
  const dead = await runCli(words(hint ?? ''), { env });
  assert.equal(dead.code, 0, dead.stderr);
  assert.notEqual(dead.stdout.trim(), '', 'the dead letters are listed');

  // the README's quick start, on the store the demo wrote (there .data/demo.db)
  const readme = readFileSync('README.md', 'utf8');
  const quick = readme.split('\n').filter((l) => l.startsWith('npx sandtrail ') && !l.startsWith('npx sandtrail serve'));
  assert.ok(quick.length >= 3);
  for (const line of quick) {
    assert.ok(line.includes(`--store ${DEMO_STORE}`), `${line} names the demo's store`);
    const r = await runCli(words(line.replace(DEMO_STORE, store)).slice(2), { env });
    assert.equal(r.code, 0, `${line}: ${r.stderr}`);
    assert.notEqual(r.stdout.trim(), '', `${line} answers something`);
  }

  // the example session of docs/hunting.md: each command's first line of output is the one shown
  const hunting = readFileSync('docs/hunting.md', 'utf8').split('\n');
  const session = hunting.flatMap((l, i): [string, string][] => (l.startsWith('$ npx sandtrail ') ? [[l, hunting[i + 1] as string]] : []));
  assert.ok(session.length >= 4);
  for (const [line, expected] of session) {
    assert.ok(line.includes(`--store ${DEMO_STORE}`), `${line} names the demo's store`);
    const r = await runCli(words(line.slice(2).replace(DEMO_STORE, store)).slice(2), { env });
    assert.equal(r.code, 0, `${line}: ${r.stderr}`);
    assert.equal(r.stdout.split('\n')[0], expected, line);
  }

  // the store is the demo's own: a second demo replaces it
  const again = await runCli(['demo', '--store', store], { env });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout, demo.stdout);
});

test('the demo replaces no store or file it did not write, and deletes nothing when its feed is wrong', async () => {
  const dir = tempDir();
  const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix() };
  // a user's store, chosen through the environment as the README says to
  const users = join(dir, 'prod.db');
  const db = new BetterSqlite3(users);
  db.exec("CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('mine')");
  db.close();
  const notes = join(dir, 'notes.txt');
  writeFileSync(notes, 'my notes');
  for (const file of [users, notes]) {
    const before = readFileSync(file);
    const r = await runCli(['demo'], { env: { ...env, SANDTRAIL_STORE: `sqlite:${file}` } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /exists and is not a store the demo wrote/);
    assert.deepEqual(readFileSync(file), before, `${file} is untouched`);
  }
  // a demo store, and a feed directory with no batch: the command fails before it deletes anything
  const store = join(dir, 'demo.db');
  const made = await runCli(['demo', '--store', `sqlite:${store}`], { env });
  assert.equal(made.code, 0, made.stderr);
  const empty = join(dir, 'empty');
  mkdirSync(empty);
  const r = await runCli(['demo', '--feed', empty, '--store', `sqlite:${store}`], { env });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /no feed batches/);
  assert.ok(existsSync(store), 'the demo store is still there');
});

test('the demo without --store writes its own store, never the default ./sandtrail.db a backfill may have filled', async () => {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'sandtrail.db'), 'a store of the user');
  const r = spawnSync(process.execPath, [resolve(builtCli()), 'demo'], {
    cwd,
    env: { ...baseEnv(), REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(readFileSync(join(cwd, 'sandtrail.db'), 'utf8'), 'a store of the user');
  assert.ok(existsSync(join(cwd, '.data', 'demo.db')));
  assert.match(r.stdout, /--store sqlite:\.data\/demo\.db/);
});
