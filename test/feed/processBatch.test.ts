import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { createSource, processBatch } from '../../src/feed/index.js';
import type { SinkDoc } from '../../src/wire/index.js';
import { tempDir } from '../support/env.js';

const hex = (i: number): string => createHash('sha256').update(String(i)).digest('hex');
const line = (i: number): string =>
  JSON.stringify({ type: 'file_behaviour', id: `${hex(i)}_Zenbox`, attributes: { behash: `b${i}`, last_modification_date: 100 + i } });

function feedOf(lines: number): string {
  const dir = tempDir();
  writeFileSync(join(dir, '202611010000.jsonl'), `${Array.from({ length: lines }, (_, i) => line(i)).join('\n')}\n`);
  return dir;
}

const options = { batch: '202611010000', maxLineBytes: 1 << 20, prefixBytes: 1024, chunkMaxDocs: 10, chunkMaxBytes: 1 << 20 };

test('chunks are handed on one at a time, in order, each with the documents of its lines', async () => {
  const source = createSource(`dir:${feedOf(35)}`);
  const calls: Array<{ n: number; ids: string[] }> = [];
  let running = 0;
  let most = 0;
  const outcome = await processBatch({
    ...options,
    source,
    deadLetter: () => Promise.resolve(),
    emitChunk: async (n, docs: readonly SinkDoc[]) => {
      running++;
      most = Math.max(most, running);
      calls.push({ n, ids: docs.map((d) => d.meta.id) });
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
    },
  });
  assert.equal(outcome.status, 'ok');
  assert.equal(outcome.chunks, 4);
  assert.equal(outcome.accepted, 35);
  assert.deepEqual(
    calls.map((c) => c.n),
    [0, 1, 2, 3],
  );
  assert.deepEqual(
    calls.flatMap((c) => c.ids),
    Array.from({ length: 35 }, (_, i) => `${hex(i)}_Zenbox`),
  );
  assert.equal(most, 1, 'never two chunks handed on at once');
});

test('a chunk that cannot be handed on fails the batch, and nothing is handed on after the failure', async () => {
  const source = createSource(`dir:${feedOf(45)}`);
  const seen: number[] = [];
  let failedAt = 0;
  await assert.rejects(
    processBatch({
      ...options,
      source,
      deadLetter: () => Promise.resolve(),
      emitChunk: async (n) => {
        seen.push(n);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (n === 1) {
          failedAt = Date.now();
          throw Object.assign(new Error('redis away'), { code: 'ECONNREFUSED' });
        }
      },
    }),
    /redis away/,
  );
  const after = seen.length;
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(seen.length, after, 'no chunk handed on after the batch failed');
  assert.ok(failedAt > 0);
  assert.deepEqual(seen, [0, 1], 'the failure of chunk 1 stopped the batch there');
});

test('a minute whose every line is refused is ok (its lines dead-lettered); one with no record at all is empty', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, '202611010000.jsonl'), 'not json\n[1]\n\n');
  writeFileSync(join(dir, '202611010001.jsonl'), '\n   \n');
  const source = createSource(`dir:${dir}`);
  const dead: unknown[] = [];
  const run = (batch: string) =>
    processBatch({ ...options, batch, source, deadLetter: async (d) => void dead.push(...d), emitChunk: () => Promise.resolve() });
  const refused = await run('202611010000');
  assert.deepEqual([refused.status, refused.lines, refused.accepted, refused.rejected], ['ok', 2, 0, 2]);
  assert.equal(dead.length, 2);
  const blank = await run('202611010001');
  assert.deepEqual([blank.status, blank.accepted, blank.rejected], ['empty', 0, 0]);
});
