import assert from 'node:assert/strict';
import { test } from 'vitest';
import { decodeChunk, encodeChunk } from '../../src/queue/index.js';
import { jsonText, sinkDocOf } from '../../src/store/index.js';
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
  const payload = await encodeChunk(docs);
  assert.ok(Buffer.isBuffer(payload));
  assert.ok(payload.length < Buffer.byteLength(docs.map((d) => d.json).join('\n')) / 2, 'compressed');
  const back = await decodeChunk(payload);
  assert.deepEqual(
    back.map((d) => ({ meta: d.meta, json: jsonText(d) })),
    docs,
  );
  assert.ok(
    back.every((d) => Buffer.isBuffer(d.json)),
    'the JSON stays UTF-8 bytes for the store',
  );
  assert.deepEqual(await decodeChunk(await encodeChunk([])), []);
});

test('a chunk larger than one zlib output buffer both ways (1 MiB) round-trips byte for byte', async () => {
  const { randomBytes } = await import('node:crypto');
  // random text compresses little, so the payload itself also spans several buffers
  const docs = Array.from({ length: 24 }, (_, i) =>
    sinkDocOf(makeDoc(i.toString(16).padStart(2, '0').repeat(32), 'Zenbox', 100 + i, { noise: randomBytes(150_000).toString('base64') })),
  );
  const payload = await encodeChunk(docs);
  assert.ok(payload.length > 3 * 1024 * 1024, `payload of ${payload.length} bytes spans several output buffers`);
  const back = await decodeChunk(payload);
  assert.deepEqual(
    back.map((d) => ({ meta: d.meta, json: jsonText(d) })),
    docs,
  );
});

test('a corrupt or foreign payload is a permanent CHUNK_CORRUPT error', async () => {
  await assert.rejects(decodeChunk(Buffer.from('not brotli')), (e: { code?: string }) => e.code === 'CHUNK_CORRUPT');
  const { brotliCompressSync } = await import('node:zlib');
  await assert.rejects(decodeChunk(brotliCompressSync(Buffer.from('{"a":1}\n'))), (e: { code?: string }) => e.code === 'CHUNK_CORRUPT');
});
