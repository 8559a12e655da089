import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { test } from 'vitest';
import type { FeedManifest } from '../../src/synth/index.js';
import { baseEnv, builtCli, runCli } from '../support/cli.js';

const feed = join('sample', 'feed');
const manifest = JSON.parse(readFileSync(join(feed, 'manifest.json'), 'utf8')) as FeedManifest;
const withBad = manifest.files.find((f) => f.malformed.length >= 2)!;
const CODE_OF_KIND: Record<string, string> = {
  not_json: 'not_json',
  truncated_json: 'not_json',
  json_array: 'not_object',
  json_number: 'not_object',
  bad_id_not_hex: 'bad_id',
  bad_id_no_underscore: 'bad_id',
  missing_id: 'missing_id',
};

test('normalize FILE.bz2: one document per valid line, one JSON rejection per bad line, exit 3', async () => {
  const r = await runCli(['normalize', join(feed, withBad.file)]);
  assert.equal(r.code, 3);
  const docs = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(docs.length, withBad.records);
  for (const d of docs) {
    for (const k of ['id', 'sha256', 'sandbox_name', 'analysis_date', 'last_modification_date', 'schema_version', 'attributes', 'pivots'])
      assert.ok(k in d, k);
  }
  const rejections = r.stderr
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { line: number; code: string; path: string; message: string });
  assert.deepEqual(
    rejections.map((x) => ({ line: x.line, code: x.code })),
    withBad.malformed.map((m) => ({ line: m.line, code: CODE_OF_KIND[m.kind] })),
  );
  for (const x of rejections) assert.deepEqual(Object.keys(x).sort(), ['code', 'line', 'message', 'path']);
});

test('normalize from stdin: bzip2 is detected, clean input exits 0, and output equals the file form', async () => {
  const clean = manifest.files.find((f) => f.malformed.length === 0)!;
  const bytes = readFileSync(join(feed, clean.file));
  const fromStdin = await runCli(['normalize'], { input: bytes });
  assert.equal(fromStdin.code, 0, fromStdin.stderr);
  assert.equal(fromStdin.stderr, '');
  const fromFile = await runCli(['normalize', join(feed, clean.file)]);
  assert.equal(fromStdin.stdout, fromFile.stdout);
  const plain = execFileSync('bzip2', ['-dc', join(feed, clean.file)]);
  const fromPlain = await runCli(['normalize'], { input: plain });
  assert.equal(fromPlain.stdout, fromFile.stdout);
  assert.equal(fromPlain.stdout.trim().split('\n').length, clean.records);
});

test('normalize from a slow pipe whose first read holds a byte: still told bzip2 or gzip by its magic', async () => {
  const clean = manifest.files.find((f) => f.malformed.length === 0)!;
  const bz2 = readFileSync(join(feed, clean.file));
  const gz = gzipSync(execFileSync('bzip2', ['-dc', join(feed, clean.file)]));
  const expected = (await runCli(['normalize', join(feed, clean.file)])).stdout;
  for (const bytes of [bz2, gz]) {
    const child = spawn(process.execPath, [builtCli(), 'normalize'], {
      env: { ...baseEnv(), SANDTRAIL_LOG_LEVEL: 'warn' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    child.stdin.write(bytes.subarray(0, 1));
    // past the command's start: its first read holds the one byte alone
    await new Promise((r) => setTimeout(r, 3000));
    child.stdin.end(bytes.subarray(1));
    assert.equal(await closed, 0);
    assert.equal(out, expected);
  }
});

test('usage errors exit 2 with a message, an input that is not there 1', async () => {
  const unknownFlag = await runCli(['normalize', '--bogus']);
  assert.equal(unknownFlag.code, 2);
  assert.match(unknownFlag.stderr, /unknown option/);
  // a file that is not there cannot be used (1, as a missing store or feed directory); a directory is a wrong argument
  const missing = await runCli(['normalize', 'no/such/file.bz2']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /cannot read no\/such\/file\.bz2: no such file/);
  const directory = await runCli(['normalize', feed]);
  assert.equal(directory.code, 2);
  assert.match(directory.stderr, /is a directory: give the batch files in it/);
  const noPivot = await runCli(['query', '--sink', 'sqlite::memory:']);
  assert.equal(noPivot.code, 2);
  assert.match(noPivot.stderr, /exactly one of --behash/);
  const badMinute = await runCli(['backfill', '--source', `dir:${feed}`, '--from', '2026-11-01']);
  assert.equal(badMinute.code, 2);
  assert.match(badMinute.stderr, /--from must be a UTC minute/);
});

test('--help works for the program and every command, documenting flags and environment', async () => {
  const top = await runCli(['--help']);
  assert.equal(top.code, 0);
  for (const cmd of ['normalize', 'backfill', 'worker', 'query', 'get', 'dlq', 'demo'])
    assert.match(top.stdout, new RegExp(`\\b${cmd}\\b`));
  for (const env of ['REDIS_URL', 'SANDTRAIL_STORE', 'SANDTRAIL_FEED_MAX_LINE_BYTES', 'SANDTRAIL_INDEX_CHUNK_MAX_DOCS'])
    assert.ok(top.stdout.includes(env), env);
  for (const args of [
    ['normalize'],
    ['backfill'],
    ['worker'],
    ['worker', 'feed'],
    ['worker', 'index'],
    ['query'],
    ['get'],
    ['dlq'],
    ['dlq', 'list'],
    ['dlq', 'show'],
    ['dlq', 'replay'],
    ['dlq', 'purge'],
    ['demo'],
  ]) {
    const r = await runCli([...args, '--help']);
    assert.equal(r.code, 0, args.join(' '));
    assert.match(r.stdout, /Usage: sandtrail/);
  }
  const q = await runCli(['query', '--help']);
  for (const f of ['--behash', '--sigma-rule', '--ja3', '--ja3s', '--dropped-sha256', '--sha256', '--json', '--store', '--sink'])
    assert.ok(q.stdout.includes(f) || top.stdout.includes(f), f);
});
