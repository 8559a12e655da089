import assert from 'node:assert/strict';
import { test } from 'vitest';
import { decodeChunk, encodeChunk } from '../../src/queue/index.js';
import { serializedOf } from '../../src/store/index.js';
import { makeDoc } from '../store/sinkConformance.js';

test('a chunk round-trips, compressed, and each document keeps its JSON text for the sink', async () => {
  const docs = Array.from({ length: 50 }, (_, i) =>
    makeDoc(i.toString(16).padStart(2, '0').repeat(32), 'Zenbox', 100 + i, {
      behash: `h${i % 3}`,
      command_executions: ['line\nbreak', 'x'.repeat(500)],
    }),
  );
  const payload = await encodeChunk(docs.map((doc) => ({ doc, json: JSON.stringify(doc) })));
  assert.ok(payload.length < Buffer.byteLength(JSON.stringify(docs)) / 2, 'compressed');
  const back = await decodeChunk(payload);
  assert.deepEqual(back, docs);
  for (const [i, d] of back.entries()) assert.equal(serializedOf(d), JSON.stringify(docs[i]));
  assert.equal(JSON.stringify(back), JSON.stringify(docs), 'the attached text is invisible to serialization');
  assert.deepEqual(await decodeChunk(await encodeChunk([])), []);
});

test('a corrupt payload is a permanent CHUNK_CORRUPT error', async () => {
  await assert.rejects(decodeChunk('bm90IGJyb3RsaQ=='), (e: { code?: string }) => e.code === 'CHUNK_CORRUPT');
});
