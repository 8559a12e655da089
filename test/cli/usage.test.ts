import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { test } from 'vitest';
import { buildProgram } from '../../src/cli/index.js';
import { openStore, type DeadLetterInput } from '../../src/store/index.js';
import { baseEnv, builtWorker, runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';

const GLOBAL_FLAGS = ['--config <file>', '--redis-url <url>', '--store <spec>', '--queue-prefix <prefix>', '--log-level <level>'];

/** Every command below the program, groups included, with its full name. */
function commandsOf(cmd: Command, path: string[] = []): [string, Command][] {
  return cmd.commands.flatMap((c) => [[[...path, c.name()].join(' '), c] as [string, Command], ...commandsOf(c, [...path, c.name()])]);
}

test("every command's --help lists the global options", () => {
  const program = buildProgram({}, () => undefined);
  const commands = commandsOf(program).filter(([name]) => name !== 'gen-feed'); // gen-feed's --help is the generator's own
  assert.ok(commands.length > 30, `${commands.length} commands`);
  for (const [name, cmd] of commands) {
    const help = cmd.helpInformation();
    assert.match(help, /Global Options:/, name);
    for (const flag of GLOBAL_FLAGS) assert.ok(help.includes(flag), `${name} --help shows ${flag}`);
  }
});

test('a subcommand --help run from the shell shows the global options', async () => {
  const r = await runCli(['dlq', 'purge', '--help']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--yes/);
  assert.match(r.stdout, /Global Options:[\s\S]*--redis-url <url>[\s\S]*--store <spec>/);
});

test('a group without its subcommand is a usage error (exit 2) showing the subcommands; help asked for is exit 0', async () => {
  for (const args of [[], ['dlq'], ['worker'], ['es']]) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `sandtrail ${args.join(' ')}: ${r.code}`);
    assert.match(r.stderr, /Commands:/, args.join(' '));
  }
  for (const args of [['--help'], ['help'], ['dlq', '--help'], ['help', 'dlq'], ['--version']]) {
    assert.equal((await runCli(args)).code, 0, `sandtrail ${args.join(' ')}`);
  }
});

test('the workers and commands that call the API name the key they use in --help', async () => {
  for (const kind of ['lookup', 'artefacts']) {
    const r = await runCli(['worker', kind, '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Environment: GTI_APIKEY .*REDIS_URL \(required\)/, kind);
  }
  for (const command of [['lookup'], ['fetch'], ['private', 'lookup'], ['mirror']]) {
    const r = await runCli([...command, '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Environment: GTI_APIKEY \(the key its calls use\)/, command.join(' '));
  }
});

test('quota replay --help documents its input format', async () => {
  const r = await runCli(['quota', 'replay', '--help']);
  assert.equal(r.code, 0);
  for (const text of [
    '"op"',
    '"user"',
    '"group"',
    '"at"',
    'ioc_delta',
    'file_upload',
    'livehunt_ruleset',
    'graph_create',
    'exit status is 3',
  ])
    assert.ok(r.stdout.includes(text), text);
});

test('lookup with an argument that is not a hash is a usage error naming it, before anything is asked', async () => {
  const only = await runCli(['lookup', 'nothex'], { env: { GTI_APIKEY: '' } });
  assert.equal(only.code, 2, only.stderr);
  assert.match(only.stderr, /not an MD5, SHA-1 or SHA-256.*"nothex"/);
  const mixed = await runCli(['lookup', '44d88612fea8a8f36de82e1278abb02f', 'zz', '--dry-run'], { env: { GTI_APIKEY: '' } });
  assert.equal(mixed.code, 2, mixed.stderr);
  assert.match(mixed.stderr, /"zz"/);
  assert.doesNotMatch(mixed.stderr, /44d88612/);
  assert.equal(mixed.stdout, '', 'not even the estimate is printed');
  const priv = await runCli(['private', 'lookup', 'nothex'], { env: { GTI_APIKEY: '' } });
  assert.equal(priv.code, 2, priv.stderr);
  assert.match(priv.stderr, /not an MD5, SHA-1 or SHA-256.*"nothex"/);
});

test('a worker without Redis is a configuration error: exit 2, one JSON log line saying what to set', async () => {
  const dir = tempDir();
  const r = await runCli(['worker', 'feed'], {
    env: { REDIS_URL: '', SANDTRAIL_REDIS_URL: '', SANDTRAIL_STORE: `sqlite:${join(dir, 'w.db')}`, SANDTRAIL_LOG_LEVEL: 'info' },
  });
  assert.equal(r.code, 2, r.stderr);
  const line = JSON.parse(r.stderr.trim().split('\n').at(-1) as string) as { code: string; msg: string };
  assert.equal(line.code, 'USAGE');
  assert.match(line.msg, /set REDIS_URL/);

  // a configuration it cannot start with: the same, one JSON line (not a plain "sandtrail: ..." line)
  const config = join(dir, 'bad.json');
  writeFileSync(config, '{"bogus": 1}');
  for (const kind of ['feed', 'index', 'scheduler', 'lookup', 'artefacts']) {
    const bad = await runCli(['worker', kind, '--config', config], { env: { REDIS_URL: '' } });
    assert.equal(bad.code, 2, bad.stderr);
    const lines = bad.stderr.trim().split('\n');
    assert.equal(lines.length, 1, bad.stderr);
    const fatal = JSON.parse(lines[0] as string) as { level: number; code: string; worker: string; msg: string };
    assert.deepEqual([fatal.level, fatal.code, fatal.worker], [60, 'CONFIG_INVALID', kind]);
    assert.match(fatal.msg, /Unrecognized key\(s\) in object: 'bogus'/);
  }
  // the entry points operators run (node dist/workers/*.js) say it the same way, and name a misspelt variable
  for (const [entry, worker] of [
    ['feed-worker', 'feed'],
    ['index-worker', 'index'],
    ['lookup-worker', 'lookup'],
    ['artefact-worker', 'artefacts'],
    ['scheduler', 'scheduler'],
  ] as const) {
    const bad = spawnSync(process.execPath, [builtWorker(entry)], {
      env: { ...baseEnv(), SANDTRAIL_CONFIG: config, REDIS_URL: '' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(bad.status, 2, bad.stderr);
    const fatal = JSON.parse(bad.stderr.trim()) as { level: number; code: string; worker: string };
    assert.deepEqual([fatal.level, fatal.code, fatal.worker], [60, 'CONFIG_INVALID', worker]);
  }
  const misspelt = spawnSync(process.execPath, [builtWorker('feed-worker')], {
    env: { ...baseEnv(), REDIS_URL: '', SANDTRAIL_REDIS_URL: '', SANDTRAIL_STOR: 'sqlite:/x.db', SANDTRAIL_LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.match(misspelt.stderr, /SANDTRAIL_STOR is not a variable sandtrail reads: ignored \(did you mean SANDTRAIL_STORE\?\)/);
});

test('dlq purge says how many it would delete and deletes only with --yes', async () => {
  const file = join(tempDir(), 'store.db');
  const store = openStore(`sqlite:${file}`);
  const entry = (line: number): DeadLetterInput => ({
    id: `normalize:202611010000:${line}`,
    stage: 'normalize',
    batch: '202611010000',
    line,
    docId: null,
    code: 'not_json',
    path: null,
    message: 'not JSON',
    raw: 'x',
    rawEncoding: 'utf8',
    rawSize: 1,
    rawTruncated: false,
  });
  try {
    await store.dlq.put([entry(1), entry(2), entry(3)]);
  } finally {
    await store.close();
  }
  const cli = (...args: string[]) => runCli(['--store', `sqlite:${file}`, 'dlq', 'purge', ...args]);

  // the test's stdin is a pipe, not a terminal: nobody to ask
  const refused = await cli();
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /would delete 3 dead letter\(s\): pass --yes/);
  assert.equal(refused.stdout, '');
  const reopened = openStore(`sqlite:${file}`);
  try {
    assert.equal(await reopened.dlq.count(), 3, 'nothing was deleted');
  } finally {
    await reopened.close();
  }

  const done = await cli('--yes', '--json');
  assert.equal(done.code, 0, done.stderr);
  assert.deepEqual(JSON.parse(done.stdout), { purged: 3 });

  const empty = await cli();
  assert.equal(empty.code, 0, 'nothing left to delete: nothing to confirm');
  assert.equal(empty.stdout, 'purged 0 dead letter(s)\n');
});

test('a single-value option given twice with two values is a usage error, on every command; repeatable ones collect every value', async () => {
  const dir = tempDir();
  const store = join(dir, 'none.db');
  const twice = await runCli(['query', '--behash', 'aaa', '--behash', 'bbb', '--store', `sqlite:${store}`]);
  assert.equal(twice.code, 2, twice.stderr);
  assert.match(twice.stderr, /option '--behash <value>' given twice \('aaa', then 'bbb'\): it takes one value/);
  assert.equal(existsSync(store), false, 'nothing opened');
  // the stored spelling feeds the same flag
  const twin = await runCli(['query', '--sigma-rule', 'x', '--sigma_rule_id', 'y', '--store', `sqlite:${store}`]);
  assert.equal(twin.code, 2);
  assert.match(twin.stderr, /'--sigma-rule <id>' given twice/);
  const global = await runCli(['--store', `sqlite:${store}`, 'status', '--store', `sqlite:${join(dir, 'b.db')}`]);
  assert.equal(global.code, 2);
  assert.match(global.stderr, /'--store <spec>' given twice/);
  // the same value twice says nothing new: accepted
  const same = await runCli(['query', '--behash', 'aaa', '--behash', 'aaa', '--store', `sqlite:${store}`]);
  assert.match(same.stderr, /no store at/);
  // a repeatable option keeps every value
  const a = join(dir, 'a.txt');
  const b = join(dir, 'b.txt');
  writeFileSync(a, '# none\n');
  writeFileSync(b, '\n');
  const files = await runCli(['lookup', '--file', a, '--file', b, '--dry-run']);
  assert.ok(files.stderr.includes(`no hash in ${a}, ${b}`), files.stderr);

  // every command of the tree, groups' commands included, watches its single-value options
  const program = buildProgram({}, () => undefined);
  let watched = 0;
  for (const [name, cmd] of [['sandtrail', program] as [string, Command], ...commandsOf(program)]) {
    for (const opt of cmd.options) {
      if (!(opt.required || opt.optional) || opt.variadic || opt.hidden) continue;
      const listeners = (cmd as unknown as EventEmitter).listenerCount(`option:${opt.name()}`);
      const repeatable = opt.description.includes('repeatable');
      assert.equal(listeners, repeatable ? 1 : 2, `${name} ${opt.flags}`);
      if (!repeatable) watched += 1;
    }
  }
  assert.ok(watched > 50, `${watched} options`);
});
