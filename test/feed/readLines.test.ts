import assert from 'node:assert/strict';
import { test } from 'vitest';
import { readLines, type FeedLine } from '../../src/feed/index.js';

async function collect(chunks: (string | Buffer)[], maxLineBytes = 1024, prefixBytes = 8): Promise<FeedLine[]> {
  async function* src(): AsyncGenerator<Buffer> {
    for (const c of chunks) yield Buffer.isBuffer(c) ? c : Buffer.from(c);
  }
  const out: FeedLine[] = [];
  for await (const l of readLines(src(), { maxLineBytes, prefixBytes })) out.push(l);
  return out;
}

test('splits lines across chunk boundaries and numbers them like the file', async () => {
  const lines = await collect(['{"a":1}\n{"b"', ':2}\r\n\n  \n{"c":', '3}']);
  assert.deepEqual(lines, [
    { kind: 'text', lineNo: 1, text: '{"a":1}' },
    { kind: 'text', lineNo: 2, text: '{"b":2}' },
    { kind: 'text', lineNo: 5, text: '{"c":3}' },
  ]);
});

test('an oversize line keeps only a prefix and its true size, and the next line is intact', async () => {
  const big = 'x'.repeat(50);
  const lines = await collect([`ok\n${big.slice(0, 20)}`, big.slice(20), '\nnext\n'], 30, 8);
  assert.equal(lines.length, 3);
  assert.deepEqual(lines[0], { kind: 'text', lineNo: 1, text: 'ok' });
  const over = lines[1];
  assert.ok(over?.kind === 'oversize');
  assert.equal(over.size, 50);
  assert.equal(over.prefix.toString(), 'xxxxxxxx');
  assert.deepEqual(lines[2], { kind: 'text', lineNo: 3, text: 'next' });
});

test('an oversize line found inside a single chunk is measured exactly', async () => {
  const lines = await collect([`${'y'.repeat(100)}\nz\n`], 10, 4);
  assert.ok(lines[0]?.kind === 'oversize');
  assert.equal(lines[0].size, 100);
  assert.equal(lines[0].prefix.toString(), 'yyyy');
  assert.deepEqual(lines[1], { kind: 'text', lineNo: 2, text: 'z' });
});

test('invalid UTF-8 is reported with its bytes, not silently replaced', async () => {
  const lines = await collect([Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), 'ok\n']);
  assert.ok(lines[0]?.kind === 'invalid_utf8');
  assert.deepEqual([...lines[0].raw], [0x7b, 0xff, 0xfe, 0x7d]);
  assert.deepEqual(lines[1], { kind: 'text', lineNo: 2, text: 'ok' });
});

test('memory stays bounded: a 64 MB line with a 1 MB cap never buffers the whole line', async () => {
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  async function* src(): AsyncGenerator<Buffer> {
    for (let i = 0; i < 64; i++) yield chunk;
    yield Buffer.from('\n{}\n');
  }
  const before = process.memoryUsage().arrayBuffers;
  let peak = 0;
  const out: FeedLine[] = [];
  for await (const l of readLines(src(), { maxLineBytes: 1024 * 1024, prefixBytes: 16 })) {
    out.push(l);
    peak = Math.max(peak, process.memoryUsage().arrayBuffers - before);
  }
  assert.ok(out[0]?.kind === 'oversize');
  assert.equal(out[0].size, 64 * 1024 * 1024);
  assert.deepEqual(out[1], { kind: 'text', lineNo: 2, text: '{}' });
  assert.ok(peak < 32 * 1024 * 1024, `peak external memory ${peak}`);
});
