import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, test } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { writeFeed } from '../../src/synth/index.js';
import { writePreviousLayout } from '../store/previousLayout.js';
import { makeDoc } from '../store/sinkConformance.js';
import { baseEnv, builtCli } from '../support/cli.js';
import { tempDir, testRedisUrl, uniquePrefix } from '../support/env.js';

/**
 * Misuses of the command line, run as a user would (the real CLI in a child process). Each run has
 * a deadline, after which it is killed and the test fails; each test checks that no redis-server
 * the command started is left running. The commands run with their own TMPDIR: a private
 * redis-server works in a directory under it, so the servers of a test are told apart from any
 * other on the machine by their working directory.
 */

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

interface Started {
  child: ChildProcess;
  stderr: () => string;
  done: Promise<Run>;
}

const NO_REDIS_URL = { REDIS_URL: '', SANDTRAIL_REDIS_URL: '' };

/** Test directories whose redis-servers are killed after each test, whatever its outcome. */
const scopes: string[] = [];
afterEach(async () => {
  for (const dir of scopes.splice(0)) for (const pid of redisServersUnder(dir)) killQuietly(pid);
});

const CLI = builtCli();

/** A fresh directory for a test, with the TMPDIR its commands use. */
function scope(): { dir: string; tmp: string } {
  const dir = tempDir('sandtrail-misuse-');
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  scopes.push(dir);
  return { dir, tmp };
}

/** Starts the CLI; `done` settles once it exits, or after `deadlineMs` (it is then killed and reported so). */
function start(args: string[], o: { tmp: string; env?: NodeJS.ProcessEnv; deadlineMs?: number; asUser?: string[]; cwd?: string }): Started {
  const deadlineMs = o.deadlineMs ?? 30_000;
  // the built CLI, as a user runs it
  const argv = [process.execPath, resolve(CLI), ...args];
  const [cmd, ...rest] = [...(o.asUser ?? []), ...argv] as [string, ...string[]];
  const child = spawn(cmd, rest, {
    env: { ...baseEnv(), SANDTRAIL_LOG_LEVEL: 'warn', ...o.env, TMPDIR: o.tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(o.cwd ? { cwd: o.cwd } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const t0 = Date.now();
  const done = new Promise<Run>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sandtrail ${args.join(' ')} did not exit within ${deadlineMs} ms; stderr: ${stderr.slice(-1500)}`));
    }, deadlineMs);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      // the pipes close right after the exit: their last bytes are read before settling
      setImmediate(() => resolve({ code, signal, stdout, stderr, ms: Date.now() - t0 }));
    });
  });
  done.catch(() => undefined);
  return { child, stderr: () => stderr, done };
}

const cli = (args: string[], o: Parameters<typeof start>[1]): Promise<Run> => start(args, o).done;

/** Pids of the running redis-servers working in a directory under `dir` (a private server works in its --dir). */
function redisServersUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() !== 'redis-server') continue;
      // a zombie (killed, not yet reaped) has no working directory: it is not running
      if (readlinkSync(`/proc/${name}/cwd`).startsWith(dir)) pids.push(Number(name));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Fails when a redis-server started under `dir` still runs 3 s after the command ended (a SIGKILL takes a moment). */
async function assertNoRedisLeft(dir: string): Promise<void> {
  let left = redisServersUnder(dir);
  for (let i = 0; i < 30 && left.length > 0; i++) {
    await sleep(100);
    left = redisServersUnder(dir);
  }
  assert.deepEqual(left, [], `redis-server process(es) left running: ${left.join(', ')}`);
}

/** Waits until `started` wrote `text` on stderr (or exited, or 60 s passed). */
async function waitFor(started: Started, text: string): Promise<void> {
  for (let i = 0; i < 600 && !started.stderr().includes(text); i++) {
    if (started.child.exitCode !== null) break;
    await sleep(100);
  }
  assert.ok(started.stderr().includes(text), `never logged "${text}": ${started.stderr().slice(-1500)}`);
}

const SHA = 'a'.repeat(64);
const ID = `${SHA}_Zenbox`;

describe('a store that cannot be one ends the command at once, before any private Redis', () => {
  const cases: [string, (s: { dir: string }) => string[], number, RegExp | ((s: { dir: string }) => RegExp)][] = [
    ['backfill --store foo:bar', () => ['backfill', '--store', 'foo:bar'], 2, /unknown store "foo:bar"/],
    [
      'backfill --store sqlite:<a directory>',
      ({ dir }) => ['backfill', '--store', `sqlite:${dir}`],
      1,
      ({ dir }) => new RegExp(`${dir} is a directory`),
    ],
    [
      'backfill --store sqlite:<a text file>',
      ({ dir }) => ['backfill', '--store', `sqlite:${join(dir, 'notes.txt')}`],
      1,
      ({ dir }) => new RegExp(`${join(dir, 'notes.txt')} is not a SQLite database`),
    ],
    ['run --store foo:bar', () => ['run', '--store', 'foo:bar'], 2, /unknown store "foo:bar"/],
    [
      // a directory no file can be created in (chmod does not stop root; /proc does)
      'backfill --store sqlite:<a file SQLite cannot create>',
      () => ['backfill', '--store', 'sqlite:/proc/sandtrail-test.db'],
      1,
      /cannot open the file \(missing, or its directory is not writable\): SQLite store \/proc\/sandtrail-test\.db: .*give the process write access/,
    ],
    [
      'lookup --store sqlite:<a directory>',
      ({ dir }) => ['lookup', SHA, '--store', `sqlite:${dir}`],
      1,
      ({ dir }) => new RegExp(`${dir} is a directory`),
    ],
    [
      'fetch --store sqlite:<a text file>',
      ({ dir }) => ['fetch', ID, '--store', `sqlite:${join(dir, 'notes.txt')}`],
      1,
      /is not a SQLite database/,
    ],
    ['private lookup --store foo:bar', () => ['private', 'lookup', SHA, '--store', 'foo:bar'], 2, /unknown store "foo:bar"/],
  ];
  for (const [name, args, code, message] of cases) {
    test(`${name}: exit ${code} with the reason, no redis-server left`, { timeout: 60_000 }, async () => {
      const s = scope();
      const feed = join(s.dir, 'feed');
      await writeFeed({ out: feed, seed: 1, start: '202611010000', minutes: 1, perMinute: 2, malformedRate: 0 });
      writeFileSync(join(s.dir, 'notes.txt'), 'these are notes, not a store\n');
      const given = args(s);
      const withSource = given[0] === 'backfill' || given[0] === 'run' ? [...given, '--source', `dir:${feed}`] : given;
      const r = await cli(withSource, { tmp: s.tmp, env: { ...NO_REDIS_URL, GTI_APIKEY: 'not-a-real-key' }, deadlineMs: 30_000 });
      assert.equal(r.code, code, r.stderr);
      assert.match(r.stderr, typeof message === 'function' ? message(s) : message);
      assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
      await assertNoRedisLeft(s.dir);
    });
  }

  test(
    "backfill or watch add into another application's SQLite database: refused, the file left as it was",
    { timeout: 60_000 },
    async () => {
      const s = scope();
      const feed = join(s.dir, 'feed');
      await writeFeed({ out: feed, seed: 1, start: '202611010000', minutes: 1, perMinute: 2, malformedRate: 0 });
      const file = join(s.dir, 'app.db');
      const app = new BetterSqlite3(file);
      app.exec('CREATE TABLE batches (x INTEGER); INSERT INTO batches VALUES (1); CREATE TABLE notes (t TEXT)');
      app.close();
      const before = readFileSync(file);
      for (const args of [
        ['backfill', '--source', `dir:${feed}`, '--store', `sqlite:${file}`],
        ['watch', 'add', 'w', '--behash', 'b'.repeat(32), '--store', `sqlite:${file}`],
      ]) {
        const r = await cli(args, { tmp: s.tmp, env: NO_REDIS_URL, deadlineMs: 30_000 });
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`${file} is a SQLite database but holds no sandtrail store \\(its tables: batches, notes\\)`));
        assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
      }
      assert.ok(readFileSync(file).equals(before), 'the file is unchanged');
      assert.equal(existsSync(`${file}-wal`), false);
      await assertNoRedisLeft(s.dir);
    },
  );

  test('with REDIS_URL set the same mistake exits 2 as well', { timeout: 60_000 }, async () => {
    const s = scope();
    mkdirSync(join(s.dir, 'feed'));
    writeFileSync(join(s.dir, 'feed', '202611010000.jsonl'), '');
    const r = await cli(['backfill', '--source', `dir:${join(s.dir, 'feed')}`, '--store', 'foo:bar'], {
      tmp: s.tmp,
      env: { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix() },
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /unknown store "foo:bar"/);
  });

  test(
    'pivot past the result window and top past its cap are usage errors, not another page or fewer values',
    { timeout: 60_000 },
    async () => {
      const s = scope();
      const pivot = await cli(['pivot', '--behash', 'abc', '--offset', '9990', '--limit', '20'], { tmp: s.tmp, env: NO_REDIS_URL });
      assert.equal(pivot.code, 2, pivot.stderr);
      assert.match(pivot.stderr, /--offset \+ --limit must stay within 10000/);
      const top = await cli(['top', 'behash', '--limit', '101'], { tmp: s.tmp, env: NO_REDIS_URL });
      assert.equal(top.code, 2, top.stderr);
      assert.match(top.stderr, /--limit/);
    },
  );

  test('worker scheduler with a source that is none exits 2 at once, opening no store', { timeout: 60_000 }, async () => {
    const s = scope();
    for (const source of ['bogus', 'dir:']) {
      const r = await cli(['worker', 'scheduler', '--source', source, '--store', `sqlite:${join(s.dir, 'sched.db')}`], {
        tmp: s.tmp,
        env: { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix() },
        deadlineMs: 20_000,
      });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /"code":"USAGE"/);
    }
    assert.ok(!existsSync(join(s.dir, 'sched.db')));
  });

  test(
    'serve --host that is no address (empty, 999.1.1.1) is a usage error, not "reachable beyond this machine"',
    { timeout: 60_000 },
    async () => {
      const s = scope();
      for (const host of ['', '999.1.1.1', 'two words']) {
        const r = await cli(['serve', '--host', host, '--port', '0'], { tmp: s.tmp, env: NO_REDIS_URL });
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, /--host must be an address or host name to bind/);
      }
      // a name that resolves to nothing is named so
      const unknown = await cli(['serve', '--host', 'nothing.invalid', '--port', '0'], { tmp: s.tmp, env: NO_REDIS_URL });
      assert.equal(unknown.code, 2, unknown.stderr);
      assert.match(unknown.stderr, /--host nothing\.invalid does not resolve/);
    },
  );

  test(
    'an Elasticsearch store spec or GTI base URL that cannot be used is a usage error that does not echo its credentials',
    { timeout: 60_000 },
    async () => {
      const s = scope();
      const r = await cli(['top', 'behash', '--store', 'es:https://bob:se cret@ho st:9200'], { tmp: s.tmp, env: NO_REDIS_URL });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /bad Elasticsearch store "es:https:\/\/\*\*\*@ho st:9200": expected es:https:\/\/host:9200/);
      assert.doesNotMatch(r.stderr + r.stdout, /se cret|bob/);
      // without a scheme, another scheme, a bad escape: each a usage error, the password never shown
      for (const spec of [
        'es:elastic:ESPASS_1@127.0.0.1:9200',
        'es:ftp://elastic:ESPASS_1@127.0.0.1:9200',
        'es:http://elastic:ESPASS%ZZ@h:9',
      ]) {
        const bad = await cli(['top', 'behash', '--store', spec], { tmp: s.tmp, env: NO_REDIS_URL });
        assert.equal(bad.code, 2, bad.stderr);
        assert.match(bad.stderr, /bad Elasticsearch store "es:(\w+:\/\/)?\*\*\*@/);
        assert.doesNotMatch(bad.stderr + bad.stdout, /ESPASS/);
      }
      // GTI's base URL with a user and password: refused before any call, naming no part of it
      const gti = await cli(['fetch', `${'a'.repeat(64)}_Zenbox`, '--json'], {
        tmp: s.tmp,
        env: { ...NO_REDIS_URL, GTI_APIKEY: 'k', GTI_BASE_URL: 'http://proxyuser:BASEPW_55@127.0.0.1:9/api/v3' },
      });
      assert.equal(gti.code, 2, gti.stderr);
      assert.match(gti.stderr, /gti\.baseUrl: an http:\/\/ or https:\/\/ URL without user or password/);
      assert.doesNotMatch(gti.stderr + gti.stdout, /BASEPW|proxyuser/);
    },
  );

  test('a lookup without REDIS_URL is told its API calls are counted on no kept ledger', { timeout: 60_000 }, async () => {
    const s = scope();
    const r = await cli(['lookup', 'a'.repeat(64), '--store', `sqlite:${join(s.dir, 'l.db')}`], {
      tmp: s.tmp,
      env: {
        ...NO_REDIS_URL,
        GTI_APIKEY: 'k',
        GTI_BASE_URL: 'http://127.0.0.1:9/api/v3',
        SANDTRAIL_LOOKUP_ATTEMPTS: '1',
        SANDTRAIL_GTI_MAX_RETRIES: '0',
      },
      deadlineMs: 45_000,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /no REDIS_URL: the API calls of this run are counted on a private Redis that ends with the command/);
    await assertNoRedisLeft(s.dir);
  });

  test('a read from a cluster that takes connections and never answers names it within seconds', { timeout: 60_000 }, async () => {
    const s = scope();
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const started = Date.now();
      const r = await cli(['query', '--behash', 'abc', '--store', `es:http://127.0.0.1:${port}`], { tmp: s.tmp, env: NO_REDIS_URL });
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`cannot reach Elasticsearch at elasticsearch:http://127\\.0\\.0\\.1:${port}: .*timed out`));
      assert.ok(Date.now() - started < 30_000, `${Date.now() - started} ms`);
    } finally {
      silent.close();
    }
  });

  test('lookup --file of comments and blank lines only names the file: nothing to look up', { timeout: 60_000 }, async () => {
    const s = scope();
    const list = join(s.dir, 'empty.txt');
    writeFileSync(list, '# nothing yet\n\n');
    const r = await cli(['lookup', '--file', list], { tmp: s.tmp, env: { ...NO_REDIS_URL, GTI_APIKEY: 'k' } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /no hash in .*empty\.txt \(blank lines and # comments are skipped\): nothing to look up/);
  });

  test(
    'a backfill or lookup into an Elasticsearch cluster that cannot be reached ends at once, naming it, before any batch',
    { timeout: 60_000 },
    async () => {
      const s = scope();
      for (const args of [
        ['backfill', '--source', 'dir:sample/feed', '--json'],
        ['lookup', 'a'.repeat(64), '--json'],
      ]) {
        const started = Date.now();
        const r = await cli([...args, '--store', 'es:http://elastic:ESPASS_1@127.0.0.1:9'], {
          tmp: s.tmp,
          env: { ...NO_REDIS_URL, GTI_APIKEY: 'k' },
          deadlineMs: 30_000,
        });
        assert.equal(r.code, 1, r.stderr);
        assert.match(r.stderr, /cannot reach Elasticsearch at elasticsearch:http:\/\/elastic:\*\*\*@127\.0\.0\.1:9: .*ECONNREFUSED/);
        assert.doesNotMatch(r.stderr + r.stdout, /ESPASS/);
        assert.ok(Date.now() - started < 20_000, `${args[0]}: ${Date.now() - started} ms`);
      }
    },
  );

  test('run from a feed directory that does not exist exits 1 at once, naming it, with no store made', { timeout: 60_000 }, async () => {
    const s = scope();
    const missing = join(s.dir, 'no-such-feed');
    const r = await cli(['run', '--source', `dir:${missing}`, '--store', `sqlite:${join(s.dir, 'r.db')}`], {
      tmp: s.tmp,
      env: NO_REDIS_URL,
      deadlineMs: 30_000,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`cannot read feed directory ${missing}`));
    assert.equal(existsSync(join(s.dir, 'r.db')), false);
    await assertNoRedisLeft(s.dir);
  });
});

describe('a command running on a private Redis stops it on every signal and on error', () => {
  const signals: [string, NodeJS.Signals[]][] = [
    ['SIGINT', ['SIGINT']],
    ['SIGTERM', ['SIGTERM']],
    ['a second SIGINT', ['SIGINT', 'SIGINT']],
    ['SIGHUP (the terminal closed)', ['SIGHUP']],
    // no handler of the command runs: the private server's lifeline ends it
    ['SIGKILL (kill -9, the OOM killer)', ['SIGKILL']],
  ];
  for (const [name, sent] of signals) {
    test(`run: ${name} ends it within 30 s and leaves no redis-server`, { timeout: 120_000 }, async () => {
      const s = scope();
      const feed = join(s.dir, 'feed');
      mkdirSync(feed);
      const run = start(['run', '--source', `dir:${feed}`], {
        tmp: s.tmp,
        env: { ...NO_REDIS_URL, SANDTRAIL_STORE: `sqlite:${join(s.dir, 'live.db')}`, SANDTRAIL_LOG_LEVEL: 'info' },
        deadlineMs: 90_000,
      });
      await waitFor(run, 'live ingestion started');
      assert.equal(redisServersUnder(s.dir).length, 1, 'the command runs on its private redis-server');
      const t0 = Date.now();
      for (const sig of sent) {
        run.child.kill(sig);
        await sleep(200);
      }
      const r = await Promise.race([
        run.done,
        sleep(30_000).then(() => {
          run.child.kill('SIGKILL');
          throw new Error(`still running 30 s after ${sent.join(', ')}: ${run.stderr().slice(-1500)}`);
        }),
      ]);
      assert.ok(Date.now() - t0 < 30_000);
      // a drain ends 0, a forced stop 130; SIGHUP ends the process as the signal does, and so does a
      // second signal that comes once the drain is over and the command is closing (the private
      // Redis's own handler stops the server, then lets the signal end the process)
      if (sent[0] === 'SIGKILL') assert.equal(r.signal, 'SIGKILL');
      else if (sent[0] === 'SIGHUP') assert.ok(r.signal === 'SIGHUP' || r.code === 129, `ended by ${r.signal ?? r.code}`);
      else if (sent.length > 1)
        assert.ok(r.code === 0 || r.code === 130 || r.signal === sent[1], `exit ${r.code} ${r.signal}: ${r.stderr.slice(-1500)}`);
      else assert.ok(r.code === 0 || r.code === 130, `exit ${r.code} ${r.signal}: ${r.stderr.slice(-1500)}`);
      await assertNoRedisLeft(s.dir);
    });
  }

  test('run: an error after the private Redis started (the HTTP port taken) exits 1 and stops it', { timeout: 120_000 }, async () => {
    const s = scope();
    const feed = join(s.dir, 'feed');
    mkdirSync(feed);
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = await cli(['run', '--source', `dir:${feed}`], {
        tmp: s.tmp,
        env: { ...NO_REDIS_URL, SANDTRAIL_STORE: `sqlite:${join(s.dir, 'live.db')}`, SANDTRAIL_HTTP_PORT: String(port) },
        deadlineMs: 60_000,
      });
      assert.equal(r.code, 1, r.stderr);
      await assertNoRedisLeft(s.dir);
    } finally {
      busy.close();
    }
  });
});

describe('an unreachable REDIS_URL is said within seconds', () => {
  for (const args of [['status'], ['ledger']]) {
    test(`${args[0]}: "cannot reach Redis at ..." (password hidden), exit 1`, { timeout: 60_000 }, async () => {
      const s = scope();
      const store = join(s.dir, 's.db');
      // a store to report on: the command gets as far as Redis
      assert.equal((await cli(['watch', 'add', 'w', '--behash', 'x', '--store', `sqlite:${store}`], { tmp: s.tmp })).code, 0);
      const r = await cli(args, {
        tmp: s.tmp,
        env: { REDIS_URL: 'redis://hunter:s3cret@127.0.0.1:1', SANDTRAIL_STORE: `sqlite:${store}` },
        deadlineMs: 20_000,
      });
      assert.equal(r.code, 1, r.stderr);
      assert.ok(r.ms < 15_000, `took ${r.ms} ms`);
      assert.match(r.stderr, /cannot reach Redis at redis:\/\/hunter:\*\*\*@127\.0\.0\.1:1/);
      assert.doesNotMatch(r.stderr, /s3cret/);
    });
  }

  test('backfill into a new store: no store is left behind for reads to mistake for an empty one', { timeout: 60_000 }, async () => {
    const s = scope();
    const feed = join(s.dir, 'feed');
    await writeFeed({ out: feed, seed: 1, start: '202611010000', minutes: 1, perMinute: 2, malformedRate: 0 });
    const store = join(s.dir, 'new.db');
    const r = await cli(['backfill', '--source', `dir:${feed}`, '--store', `sqlite:${store}`], {
      tmp: s.tmp,
      env: { REDIS_URL: 'redis://hunter:s3cret@127.0.0.1:1' },
      deadlineMs: 20_000,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /cannot reach Redis at redis:\/\/hunter:\*\*\*@127\.0\.0\.1:1/);
    assert.deepEqual(readdirSync(s.dir).sort(), ['feed', 'tmp']);
    // a read of that path still says there is no store
    const read = await cli(['top', 'behash', '--store', `sqlite:${store}`], { tmp: s.tmp, env: NO_REDIS_URL });
    assert.equal(read.code, 1, read.stderr);
    assert.match(read.stderr, /no store at/);
  });
});

describe('reads never create a store', () => {
  const reads: string[][] = [
    ['query', '--behash', 'x'],
    ['pivot', '--behash', 'x'],
    ['top', 'behash'],
    ['get', ID],
    ['related', ID],
    ['file', SHA],
    ['dlq', 'list'],
    ['dlq', 'show', 'x'],
    ['dlq', 'replay', '--all'],
    ['watch', 'list'],
    ['artefacts', 'list', ID],
    ['status'],
    ['serve', '--port', '0'],
  ];
  test(
    'each read (and dead-letter replay) of a mistyped store path fails naming it, exit 1, and creates nothing',
    { timeout: 300_000 },
    async () => {
      const s = scope();
      const path = join(s.dir, 'sandtrial.db');
      const failures: string[] = [];
      for (const args of reads) {
        const r = await cli([...args, '--store', `sqlite:${path}`], { tmp: s.tmp, env: NO_REDIS_URL, deadlineMs: 30_000 });
        const expected = `no store at ${path} (sqlite:${path}): run a backfill first or check --store`;
        if (r.code !== 1 || !r.stderr.includes(expected))
          failures.push(`${args.join(' ')}: exit ${r.code}, stderr ${JSON.stringify(r.stderr)}`);
        if (existsSync(path)) failures.push(`${args.join(' ')} created ${path}`);
      }
      assert.deepEqual(failures, []);
      assert.deepEqual(readdirSync(s.dir).sort(), ['tmp']);
    },
  );

  test('an empty --store (an unset variable) is a usage error: no ./sandtrail.db is written or read', { timeout: 120_000 }, async () => {
    const s = scope();
    const feed = join(s.dir, 'feed');
    await writeFeed({ out: feed, seed: 1, start: '202611010000', minutes: 1, perMinute: 2, malformedRate: 0 });
    const failures: string[] = [];
    for (const [flag, value] of [
      ['--store', ''],
      ['--store', ' '],
      ['--sink', ''],
      ['--redis-url', ''],
      ['--queue-prefix', ''],
      ['--log-level', ''],
      ['--log-format', ''],
      ['--config', ''],
    ] as const) {
      const r = await cli(['backfill', '--source', `dir:${feed}`, flag, value], {
        tmp: s.tmp,
        env: NO_REDIS_URL,
        deadlineMs: 30_000,
        cwd: s.dir,
      });
      if (r.code !== 2 || !r.stderr.includes(`${flag} needs a value`)) failures.push(`${flag} '${value}': exit ${r.code}, ${r.stderr}`);
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(readdirSync(s.dir).sort(), ['feed', 'tmp']);
  });

  test('backfill into a missing directory fails naming it, creates nothing, starts no Redis', { timeout: 60_000 }, async () => {
    const s = scope();
    const feed = join(s.dir, 'feed');
    await writeFeed({ out: feed, seed: 1, start: '202611010000', minutes: 1, perMinute: 2, malformedRate: 0 });
    const missing = join(s.dir, 'no', 'such', 'dir');
    const r = await cli(['backfill', '--source', `dir:${feed}`, '--store', `sqlite:${join(missing, 'x.db')}`], {
      tmp: s.tmp,
      env: NO_REDIS_URL,
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`${missing} does not exist`));
    assert.equal(existsSync(join(s.dir, 'no')), false);
    assert.deepEqual(
      readdirSync(s.tmp).filter((n) => n.startsWith('sandtrail-redis-')),
      [],
      'no private Redis was started',
    );
    await assertNoRedisLeft(s.dir);
  });
});

/** A test scope whose directories `nobody` may enter, with an empty `shared` directory for a store. */
function sharedScope(): { s: ReturnType<typeof scope>; shared: string } {
  const s = scope();
  chmodSync(s.dir, 0o755);
  chmodSync(s.tmp, 0o777);
  const shared = join(s.dir, 'shared');
  mkdirSync(shared);
  return { s, shared };
}

/** setpriv arguments running a command as `nobody`, or why that is not possible here. */
function asNobody(): string[] | string {
  if (process.getuid?.() !== 0) return [];
  if (spawnSync('setpriv', ['--version']).status !== 0) return 'running as root without setpriv: permission bits are not enforced for root';
  if (spawnSync('getent', ['passwd', 'nobody']).status !== 0) return 'running as root without a nobody user';
  return ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'];
}

describe('a store the hunter may only read', () => {
  const user = asNobody();
  const sha = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');

  /**
   * A store filled by a backfill, readable by everyone; its directory is left as `dirMode`. The
   * reads leave no -wal or -shm beside it; with `keepShm`, a reader that leaves them (the sqlite3
   * shell, an older version) has read it.
   */
  async function sharedStore(
    dirMode: number,
    keepShm = false,
  ): Promise<{ s: ReturnType<typeof scope>; file: string; value: string; ids: string[] }> {
    const { s, shared } = sharedScope();
    const file = join(shared, 'hunt.db');
    await writeFeed({ out: join(s.dir, 'feed'), seed: 4, start: '202611010000', minutes: 2, perMinute: 10, malformedRate: 0 });
    const env = { REDIS_URL: await testRedisUrl(), SANDTRAIL_QUEUE_PREFIX: uniquePrefix(), SANDTRAIL_STORE: `sqlite:${file}` };
    const b = await cli(['backfill', '--source', `dir:${join(s.dir, 'feed')}`, '--json'], { tmp: s.tmp, env, deadlineMs: 120_000 });
    assert.equal(b.code, 0, b.stderr);
    const top = JSON.parse((await cli(['top', 'behash', '--json', '--store', `sqlite:${file}`], { tmp: s.tmp })).stdout) as {
      value: string;
    }[];
    const value = (top[0] as { value: string }).value;
    const q = await cli(['query', '--behash', value, '--json', '--store', `sqlite:${file}`], { tmp: s.tmp });
    const ids = JSON.parse(q.stdout) as string[];
    assert.ok(ids.length > 0);
    assert.deepEqual(readdirSync(shared), ['hunt.db'], 'the reads tidied the -wal and -shm SQLite made for them');
    if (keepShm) {
      const reader = new BetterSqlite3(file, { readonly: true });
      reader.prepare('SELECT count(*) FROM sqlite_master').get();
      reader.close();
    }
    assert.deepEqual(readdirSync(shared).sort(), keepShm ? ['hunt.db', 'hunt.db-shm', 'hunt.db-wal'] : ['hunt.db']);
    chmodSync(file, 0o444);
    chmodSync(shared, dirMode);
    return { s, file, value, ids };
  }

  for (const [what, dirMode, keepShm] of [
    ['a 0444 file in a directory the hunter cannot write', 0o555, false],
    ['a 0444 file in a directory the hunter cannot write, with the -shm an earlier reader left', 0o555, true],
    ['a 0444 file in a directory the hunter can write', 0o777, false],
  ] as const) {
    test(`${what}: query, pivot, status and prune --dry-run answer, and the file is not changed`, { timeout: 300_000 }, async (ctx) => {
      if (typeof user === 'string') {
        console.warn(`skipped: ${user}`);
        ctx.skip();
        return;
      }
      const { s, file, value, ids } = await sharedStore(dirMode, keepShm);
      try {
        const before = sha(file);
        const store = ['--store', `sqlite:${file}`];
        const q = await cli(['query', '--behash', value, '--json', ...store], { tmp: s.tmp, asUser: user, env: NO_REDIS_URL });
        assert.equal(q.code, 0, q.stderr);
        assert.deepEqual(JSON.parse(q.stdout), ids);
        const p = await cli(['pivot', '--behash', value, '--json', ...store], { tmp: s.tmp, asUser: user, env: NO_REDIS_URL });
        assert.equal(p.code, 0, p.stderr);
        assert.equal((JSON.parse(p.stdout) as { behaviours: number }).behaviours, ids.length);
        const st = await cli(['status', '--json', ...store], { tmp: s.tmp, asUser: user, env: NO_REDIS_URL });
        assert.equal(st.code, 0, st.stderr);
        assert.equal((JSON.parse(st.stdout) as { recent_batches: unknown[] }).recent_batches.length, 2);
        // a count of what prune would remove is a read too
        const dry = await cli(['prune', '--older-than', '1', '--dry-run', '--json', ...store], {
          tmp: s.tmp,
          asUser: user,
          env: NO_REDIS_URL,
        });
        assert.equal(dry.code, 0, dry.stderr);
        assert.equal((JSON.parse(dry.stdout) as { dryRun: boolean }).dryRun, true);
        assert.equal(sha(file), before, 'a read does not change the store');
      } finally {
        chmodSync(join(s.dir, 'shared'), 0o755);
      }
    });
  }

  test('a store file the hunter may not read at all: the error names it, exit 1', { timeout: 300_000 }, async (ctx) => {
    if (typeof user === 'string') {
      console.warn(`skipped: ${user}`);
      ctx.skip();
      return;
    }
    const { s, file, value } = await sharedStore(0o755);
    chmodSync(file, 0o000);
    const r = await cli(['query', '--behash', value, '--store', `sqlite:${file}`], { tmp: s.tmp, asUser: user, env: NO_REDIS_URL });
    assert.equal(r.code, 1, r.stderr);
    assert.ok(r.stderr.includes(file), r.stderr);
    assert.match(r.stderr, /permission denied/);
  });
});

test('a store written before the split by day, shared read-only: one line naming the fix, exit 1, the file unchanged', async (ctx) => {
  const user = asNobody();
  if (typeof user === 'string') {
    console.warn(`skipped: ${user}`);
    ctx.skip();
    return;
  }
  const { s, shared } = sharedScope();
  const file = join(shared, 'old.db');
  const db = new BetterSqlite3(file);
  writePreviousLayout(db, [makeDoc('a'.repeat(64), 'Zenbox', 1_700_000_000, { behash: 'b1' })]);
  db.close();
  chmodSync(file, 0o444);
  chmodSync(shared, 0o555);
  const before = createHash('sha256').update(readFileSync(file)).digest('hex');
  try {
    const r = await cli(['query', '--behash', 'b1', '--store', `sqlite:${file}`], { tmp: s.tmp, asUser: user, env: NO_REDIS_URL });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /written by an older version and is not split by day yet/);
    assert.match(r.stderr, /run any sandtrail command on it once as a user who may write it/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), before);
  } finally {
    chmodSync(shared, 0o755);
  }
  // its owner opens it once (any command): it is split, and the hunter reads it
  const own = await cli(['query', '--behash', 'b1', '--json', '--store', `sqlite:${file}`], { tmp: s.tmp, env: NO_REDIS_URL });
  assert.equal(own.code, 0, own.stderr);
  assert.deepEqual(JSON.parse(own.stdout), [`${'a'.repeat(64)}_Zenbox`]);
  chmodSync(shared, 0o555);
  try {
    const r = await cli(['query', '--behash', 'b1', '--json', '--store', `sqlite:${file}`], {
      tmp: s.tmp,
      asUser: user,
      env: NO_REDIS_URL,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), [`${'a'.repeat(64)}_Zenbox`]);
  } finally {
    chmodSync(shared, 0o755);
  }
});

describe('a feed directory with nothing to backfill', () => {
  const layouts: [string, Record<string, string>][] = [
    ['empty', {}],
    [
      'holding only files whose names carry no minute',
      { 'readme.txt': 'notes', 'batch.jsonl': '{}\n', 'behaviours-2026-11-01.jsonl': '{}\n' },
    ],
  ];
  for (const [what, files] of layouts) {
    for (const range of [[], ['--from', '202611010000', '--to', '202611010005']]) {
      test(
        `${what}${range.length ? ', with --from/--to' : ''}: exit 1 naming the directory and the names it reads, no Redis`,
        { timeout: 60_000 },
        async () => {
          const s = scope();
          const feed = join(s.dir, 'feed');
          mkdirSync(feed);
          for (const [name, text] of Object.entries(files)) writeFileSync(join(feed, name), text);
          const r = await cli(['backfill', '--source', `dir:${feed}`, ...range, '--store', `sqlite:${join(s.dir, 's.db')}`], {
            tmp: s.tmp,
            env: NO_REDIS_URL,
          });
          assert.equal(r.code, 1, r.stderr);
          assert.ok(r.stderr.includes(`no feed batches in ${feed}`), r.stderr);
          assert.match(r.stderr, /YYYYMMDDhhmm/);
          assert.doesNotMatch(r.stderr, /redis/i);
          assert.deepEqual(
            readdirSync(s.tmp).filter((n) => n.startsWith('sandtrail-redis-')),
            [],
            'no private Redis was started',
          );
          await assertNoRedisLeft(s.dir);
        },
      );
    }
  }
});

describe('status of a store filled by backfills', () => {
  test(
    'without REDIS_URL it reports the batch log, dead letters and the lag, and says queue figures need REDIS_URL',
    { timeout: 180_000 },
    async () => {
      const s = scope();
      const feed = join(s.dir, 'feed');
      const manifest = await writeFeed({ out: feed, seed: 7, start: '202611010000', minutes: 3, perMinute: 20, malformedRate: 0.1 });
      const env = { ...NO_REDIS_URL, SANDTRAIL_STORE: `sqlite:${join(s.dir, 's.db')}` };
      const b = await cli(['backfill', '--source', `dir:${feed}`, '--json'], { tmp: s.tmp, env, deadlineMs: 120_000 });
      assert.equal(b.code, 0, b.stderr);
      assert.equal((JSON.parse(b.stdout) as { batches: { ok: number } }).batches.ok, 3);
      await assertNoRedisLeft(s.dir);

      const j = await cli(['status', '--json'], { tmp: s.tmp, env, deadlineMs: 30_000 });
      assert.equal(j.code, 0, j.stderr);
      const report = JSON.parse(j.stdout) as {
        cursor: string | null;
        lag_seconds: number | null;
        queues: unknown;
        recent_batches: { batch: string; status: string }[];
        dead_letters: number;
      };
      assert.equal(report.queues, null);
      assert.equal(report.cursor, null);
      assert.deepEqual(
        report.recent_batches.map((e) => [e.batch, e.status]),
        [
          ['202611010002', 'ok'],
          ['202611010001', 'ok'],
          ['202611010000', 'ok'],
        ],
      );
      assert.equal(report.dead_letters, manifest.malformedLines);
      // every batch is ok: the lag runs from the end of the newest minute
      const expected = (Date.now() - Date.UTC(2026, 10, 1, 0, 3)) / 1000;
      assert.ok(
        report.lag_seconds !== null && Math.abs(report.lag_seconds - expected) < 120,
        `lag ${report.lag_seconds}, about ${expected}`,
      );

      const t = await cli(['status'], { tmp: s.tmp, env, deadlineMs: 30_000 });
      assert.equal(t.code, 0, t.stderr);
      assert.match(t.stdout, /REDIS_URL/);
      assert.match(t.stdout, /^lag: \d+ s( \(\d+ d( \d+ h)?( \d+ min)?\))?$/m);
      assert.match(t.stdout, new RegExp(`dead letters: ${manifest.malformedLines}`));
      assert.match(t.stdout, /202611010002 ok/);
    },
  );

  test('with REDIS_URL and every batch ok, the lag is shown', { timeout: 180_000 }, async () => {
    const s = scope();
    const feed = join(s.dir, 'feed');
    await writeFeed({ out: feed, seed: 8, start: '202611020000', minutes: 2, perMinute: 5, malformedRate: 0 });
    const env = {
      REDIS_URL: await testRedisUrl(),
      SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
      SANDTRAIL_STORE: `sqlite:${join(s.dir, 's.db')}`,
    };
    assert.equal((await cli(['backfill', '--source', `dir:${feed}`, '--json'], { tmp: s.tmp, env, deadlineMs: 120_000 })).code, 0);
    const j = await cli(['status', '--json'], { tmp: s.tmp, env, deadlineMs: 30_000 });
    assert.equal(j.code, 0, j.stderr);
    const report = JSON.parse(j.stdout) as { lag_seconds: number | null; queues: { feed: Record<string, number> } | null };
    assert.ok(report.queues !== null);
    assert.equal(report.queues.feed.completed, 2);
    const expected = (Date.now() - Date.UTC(2026, 10, 2, 0, 2)) / 1000;
    assert.ok(report.lag_seconds !== null && Math.abs(report.lag_seconds - expected) < 120, `lag ${report.lag_seconds}, about ${expected}`);
  });
});
