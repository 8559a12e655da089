import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { makeDirs } from '../../src/files/index.js';
import { tempDir } from '../support/env.js';

test('makeDirs creates the missing levels, accepts a directory already there, and refuses a file in the way', async () => {
  const dir = tempDir();
  const deep = join(dir, 'a', 'b', 'c');
  await makeDirs(deep);
  assert.ok(statSync(deep).isDirectory());
  await makeDirs(deep);
  await makeDirs(join(dir, 'a'));
  writeFileSync(join(dir, 'f'), 'x');
  await assert.rejects(makeDirs(join(dir, 'f')), { code: 'EEXIST' });
  await assert.rejects(makeDirs(join(dir, 'f', 'g')), { code: 'ENOTDIR' });
  // several callers at once (hook workers writing the same watch file) all succeed
  await Promise.all(Array.from({ length: 8 }, () => makeDirs(join(dir, 'x', 'y', 'z'))));
  assert.ok(statSync(join(dir, 'x', 'y', 'z')).isDirectory());
});

const hasProc = existsSync('/proc/self');
test.skipIf(!hasProc)(
  `makeDirs under /proc fails with ENOENT at once (Node’s recursive mkdir spins there forever)${hasProc ? '' : ' (skipped: this system has no /proc)'}`,
  async () => {
    const started = Date.now();
    await assert.rejects(makeDirs('/proc/sandtrail-no-such-dir/hits'), { code: 'ENOENT' });
    assert.ok(Date.now() - started < 5_000);
  },
  10_000,
);
