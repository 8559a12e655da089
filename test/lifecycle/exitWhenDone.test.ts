import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'vitest';
import { tempDir } from '../support/env.js';

/** Runs a script that finishes its work with `leftOpen` still holding the event loop, then exitWhenDone. */
function run(leftOpen: string): { code: number | null; stderr: string; ms: number } {
  const file = join(tempDir(), 'finish.ts');
  const lifecycle = resolve('src/lifecycle/index.ts');
  writeFileSync(
    file,
    `import { createServer } from 'node:net';
import { exitWhenDone } from ${JSON.stringify(lifecycle)};
${leftOpen}
process.exitCode = 3;
exitWhenDone({ graceMs: 300, onLinger: (open) => process.stderr.write('open: ' + JSON.stringify(open) + '\\n') });
`,
  );
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stderr: r.stderr, ms: Date.now() - t0 };
}

test('a process whose work is over exits after the grace even with a server left open, saying what was open', () => {
  const r = run("createServer().listen(0, '127.0.0.1'); setInterval(() => undefined, 1000);");
  assert.equal(r.code, 3, `exit ${r.code}: ${r.stderr}`);
  // (its stdio pipes are listed too: they are open, though they keep nothing alive)
  const open = JSON.parse(/open: (.*)/.exec(r.stderr)?.[1] ?? '[]') as string[];
  assert.ok(open.includes('TCPServerWrap') && open.includes('Timeout'), r.stderr);
  assert.ok(r.ms < 10_000, `${r.ms} ms`);
});

test('with nothing left open it exits on its own, and nothing is said', () => {
  const r = run('');
  assert.equal(r.code, 3, r.stderr);
  assert.doesNotMatch(r.stderr, /open:/);
});
