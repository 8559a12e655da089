import assert from 'node:assert/strict';
import { test } from 'vitest';
import { decodeChunk, encodeChunk } from '../../src/wire/index.js';
import { jsonText, sinkDocOf } from '../../src/wire/index.js';
import { makeDoc } from '../store/sinkConformance.js';

test('a chunk round-trips, compressed: each document keeps its meta and its JSON text, byte for byte', async () => {
  const docs = Array.from({ length: 50 }, (_, i) =>
    sinkDocOf(
      makeDoc(i.toString(16).padStart(2, '0').repeat(32), 'Zenbox', 100 + i, {
        behash: `h${i % 3}`,
        command_executions: ['line\nbreak', 'x'.repeat(500), 'ünïcödé \u2028'],
      }),
    ),
  );
  const { payload, rawBytes } = await encodeChunk(docs);
  assert.ok(Buffer.isBuffer(payload));
  assert.ok(payload.length < Buffer.byteLength(docs.map((d) => d.json).join('\n')) / 2, 'compressed');
  assert.ok(rawBytes > Buffer.byteLength(docs.map((d) => d.json).join('\n')), 'the decoded size counts the documents and their metas');
  const back = await decodeChunk(payload, rawBytes);
  assert.deepEqual(
    back.map((d) => ({ meta: d.meta, json: jsonText(d) })),
    docs,
  );
  assert.ok(
    back.every((d) => Buffer.isBuffer(d.json)),
    'the JSON stays UTF-8 bytes for the store',
  );
  const empty = await encodeChunk([]);
  assert.deepEqual(await decodeChunk(empty.payload, empty.rawBytes), []);
});

test('a chunk larger than one zlib output buffer both ways (1 MiB) round-trips byte for byte', async () => {
  const { randomBytes } = await import('node:crypto');
  // random text compresses little, so the payload itself also spans several buffers
  const docs = Array.from({ length: 24 }, (_, i) =>
    sinkDocOf(makeDoc(i.toString(16).padStart(2, '0').repeat(32), 'Zenbox', 100 + i, { noise: randomBytes(150_000).toString('base64') })),
  );
  const { payload, rawBytes } = await encodeChunk(docs);
  assert.ok(payload.length > 3 * 1024 * 1024, `payload of ${payload.length} bytes spans several output buffers`);
  const back = await decodeChunk(payload, rawBytes);
  assert.deepEqual(
    back.map((d) => ({ meta: d.meta, json: jsonText(d) })),
    docs,
  );
});

test('a corrupt or foreign payload is a permanent CHUNK_CORRUPT error', async () => {
  await assert.rejects(decodeChunk(Buffer.from('not brotli'), 1024), (e: { code?: string }) => e.code === 'CHUNK_CORRUPT');
  const { brotliCompressSync } = await import('node:zlib');
  await assert.rejects(
    decodeChunk(brotliCompressSync(Buffer.from('{"a":1}\n')), 1024),
    (e: { code?: string }) => e.code === 'CHUNK_CORRUPT',
  );
});

test('a payload that decodes past its cap is refused (CHUNK_CORRUPT) without decoding the rest', async () => {
  const { brotliCompressSync, constants } = await import('node:zlib');
  // 256 MiB of zeros in a few KB
  const bomb = brotliCompressSync(Buffer.alloc(256 * 1024 * 1024), { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
  assert.ok(bomb.length < 64 * 1024, `a ${bomb.length}-byte payload`);
  const before = process.memoryUsage().arrayBuffers;
  await assert.rejects(decodeChunk(bomb, 4 * 1024 * 1024), (e: { code?: string; message?: string }) => {
    assert.equal(e.code, 'CHUNK_CORRUPT');
    assert.match(e.message ?? '', /more than the 4194304 bytes it was written with/);
    return true;
  });
  assert.ok(process.memoryUsage().arrayBuffers - before < 64 * 1024 * 1024, 'the decoder stopped near the cap');
  // one byte short of a real chunk's size is refused too: the cap is exact
  const docs = [sinkDocOf(makeDoc('ab'.repeat(32), 'Zenbox', 100, { behash: 'h' }))];
  const { payload, rawBytes } = await encodeChunk(docs);
  await assert.rejects(decodeChunk(payload, rawBytes - 1), (e: { code?: string }) => e.code === 'CHUNK_CORRUPT');
  assert.equal((await decodeChunk(payload, rawBytes)).length, 1);
});
