import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'vitest';
import { escapeControls } from '../../src/cli/index.js';
import { openStore } from '../../src/store/index.js';
import { letter } from '../store/bookkeepingConformance.js';
import { makeDoc, sinkDocs } from '../store/sinkConformance.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/env.js';

test('control characters of stored text are escaped: the terminal keeps its lines and columns, and no escape sequence reaches it', () => {
  assert.equal(escapeControls('a\tb\nc\r\u001b[31mred\u009b1m\u007f'), 'a\\tb\\nc\\r\\u001b[31mred\\u009b1m\\u007f');
  assert.equal(escapeControls('a\tb\nc\u001b', '\n\t'), 'a\tb\nc\\u001b');
  assert.equal(escapeControls('plain — ünïcode'), 'plain — ünïcode');
});

test("dlq list: a message holding the feed's tabs, line breaks and escape sequences stays one line of four columns", async () => {
  const file = join(tempDir(), 's.db');
  const store = openStore(`sqlite:${file}`);
  await store.dlq.put([
    letter({ id: 'normalize:202611270000:1', batch: '202611270000', message: 'Unexpected token \u001b[31mRED\tcol\r\nnext' }),
  ]);
  await store.close();
  const r = await runCli(['dlq', 'list', '--store', `sqlite:${file}`]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, r.stdout);
  assert.equal(lines[0]?.split('\t').length, 4, r.stdout);
  assert.ok(!r.stdout.includes('\u001b'), 'no raw escape');
  assert.match(r.stdout, /Unexpected token \\u001b\[31mRED\\tcol\\r\\nnext/);
});

test('piped, a stored value cannot drive the terminal nor reorder or hide what is shown; --json parses back to the exact value', async () => {
  const file = join(tempDir(), 'h.db');
  const hostile = 'Sig\u001b[31m-\u202egpj.exe\u200b-1';
  const store = openStore(`sqlite:${file}`);
  await store.sink.upsert(sinkDocs(makeDoc('e'.repeat(64), 'Zenbox', 1_795_000_000, { sigma_analysis_results: [{ rule_id: hostile }] })));
  await store.close();
  const text = await runCli(['top', 'sigma-rule', '--store', `sqlite:${file}`]);
  assert.equal(text.code, 0, text.stderr);
  const raw = (out: string): boolean => ['\u001b', '\u202e', '\u200b'].some((c) => out.includes(c));
  assert.ok(!raw(text.stdout), 'no raw control, bidi or zero-width character');
  // pivot values are kept lower-case
  assert.ok(text.stdout.includes('sig\\u001b[31m-\\u202egpj.exe\\u200b-1'), text.stdout);
  const json = await runCli(['top', 'sigma-rule', '--json', '--store', `sqlite:${file}`]);
  assert.equal(json.code, 0, json.stderr);
  assert.ok(!raw(json.stdout));
  const [first] = JSON.parse(json.stdout) as { value: string }[];
  assert.equal(first?.value, hostile.toLowerCase(), 'the escapes are JSON escapes: parsed back, the stored value exactly');
});
