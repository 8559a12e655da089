import assert from 'node:assert/strict';
import { test } from 'vitest';
import { pack } from 'tar-stream';
import { readTar } from '../../src/feed/index.js';

async function tarOf(entries: { name: string; data?: Buffer; type?: 'directory' }[]): Promise<Buffer> {
  const p = pack();
  for (const e of entries) {
    if (e.type === 'directory') p.entry({ name: e.name, type: 'directory' });
    else p.entry({ name: e.name }, e.data ?? Buffer.alloc(0));
  }
  p.finalize();
  const parts: Buffer[] = [];
  for await (const c of p) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

async function* chunked(b: Buffer, size = 700): AsyncGenerator<Buffer> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

const collect = async (src: AsyncIterable<Buffer>): Promise<[string, string][]> => {
  const out: [string, string][] = [];
  for await (const e of readTar(src)) out.push([e.name, e.data.toString('utf8')]);
  return out;
};

test('regular files come out in order with long names; directories are skipped', async () => {
  const long = `${'d'.repeat(120)}/202611010000.jsonl.bz2`;
  const tar = await tarOf([
    { name: 'hour', type: 'directory' },
    { name: 'hour/202611010001.jsonl', data: Buffer.from('a\nb\n') },
    { name: long, data: Buffer.from('x'.repeat(5000)) },
    { name: 'empty', data: Buffer.alloc(0) },
  ]);
  assert.deepEqual(await collect(chunked(tar)), [
    ['hour/202611010001.jsonl', 'a\nb\n'],
    [long, 'x'.repeat(5000)],
    ['empty', ''],
  ]);
});

test('an archive cut inside an entry is BATCH_CORRUPT; an error of the input itself is passed on as it is', async () => {
  const tar = await tarOf([{ name: 'a', data: Buffer.from('y'.repeat(4000)) }]);
  await assert.rejects(collect(chunked(tar.subarray(0, 1500))), (e: { code?: string }) => e.code === 'BATCH_CORRUPT');
  const cut = async function* (): AsyncGenerator<Buffer> {
    yield tar.subarray(0, 1000);
    throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
  };
  await assert.rejects(collect(cut()), (e: { code?: string }) => e.code === 'ECONNRESET');
});
