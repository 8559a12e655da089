import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, test } from 'vitest';
import { builtCli } from '../support/cli.js';
import { tempDir } from './helpers.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const tmp = tempDir('synth-cli-');
afterAll(tmp.cleanup);

function run(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, builtCli()), 'gen-feed', ...args], { cwd: ROOT, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('--help documents every flag', () => {
  const r = run('--help');
  assert.equal(r.code, 0);
  for (const flag of [
    '--out',
    '--minutes',
    '--per-minute',
    '--seed',
    '--start',
    '--malformed-rate',
    '--big-rate',
    '--missing',
    '--missing-index',
    '--oversize-bytes',
    '--compression',
    '--target-mb',
    '--multi-stream',
  ]) {
    assert.ok(r.stdout.includes(flag), flag);
  }
});

test('usage errors exit 2 with a clear message', () => {
  for (const [args, msg] of [
    [['--minutes', '3'], /--out DIR is required/],
    [['--out', tmp.dir, '--bogus'], /Unknown option '--bogus'/],
    [['--out', tmp.dir, '--minutes', 'x'], /--minutes must be an integer/],
    [['--out', tmp.dir, '--compression', 'zip'], /--compression must be bz2, gz or none/],
    [['--out', tmp.dir, '--start', '2026'], /--start must be a UTC minute/],
    [['--out', tmp.dir, '--malformed-rate', '1.5'], /--malformed-rate must be a number in \[0, 1\]/],
  ] as const) {
    const r = run(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, msg);
  }
});

test('a small run writes the files and prints a one-line summary', () => {
  const out = join(tmp.dir, 'feed');
  const r = run('--out', out, '--minutes', '3', '--per-minute', '5', '--seed', '7', '--missing-index', '1', '--start', '202601020304');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n').length, 1);
  assert.match(r.stdout, /2 files \(1 missing\), \d+ records, \d+ malformed, .* MB uncompressed, .* MB bz2/);
  const m = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as { missing: string[]; seed: number };
  assert.deepEqual(m.missing, ['202601020305']);
  assert.equal(m.seed, 7);
  assert.ok(existsSync(join(out, '202601020304.jsonl.bz2')) && existsSync(join(out, '202601020306.jsonl.bz2')));
});

test('a directory holding an earlier run is refused without --clean, replaced with it', () => {
  const out = join(tmp.dir, 'again');
  assert.equal(run('--out', out, '--minutes', '5', '--per-minute', '2', '--seed', '3').code, 0);
  const refused = run('--out', out, '--minutes', '2', '--per-minute', '2', '--seed', '3');
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /already holds 6 file\(s\) of an earlier run .*: add --clean/);
  const replaced = run('--out', out, '--minutes', '2', '--per-minute', '2', '--seed', '3', '--clean');
  assert.equal(replaced.code, 0, replaced.stderr);
  assert.deepEqual(readdirSync(out).sort(), ['202611010000.jsonl.bz2', '202611010001.jsonl.bz2', 'manifest.json']);
});
