import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { gzipSync } from 'node:zlib';
import { decodeStream, findExecutable, resolveBzip2Decoder, type DecoderChoice } from '../../src/feed/index.js';
import { tempDir } from '../support/env.js';

const dir = tempDir();
const bz = (s: string): Buffer => execFileSync('bzip2', ['-c'], { input: s });

async function decodeAll(path: string, decoder: DecoderChoice, c: 'bz2' | 'gz' = 'bz2'): Promise<string> {
  const parts: Buffer[] = [];
  for await (const b of decodeStream(path, c, { decoder })) parts.push(b);
  return Buffer.concat(parts).toString();
}

const ALL = ['lbzip2', 'pbzip2', 'bzip2'] as const;
const decoders = ALL.filter((d) => findExecutable(d));

test('at least the fast decoder is available (setup installs lbzip2)', () => {
  assert.ok(decoders.length > 0);
  assert.equal(resolveBzip2Decoder('auto').name, decoders[0]);
});

// every decoder gets its tests: one that is not installed is reported skipped, with the reason
for (const d of ALL) {
  const missing = decoders.includes(d) ? '' : ` (skipped: ${d} is not installed; apt-get install ${d})`;
  const decoderTest = test.skipIf(missing !== '');
  decoderTest(`${d}: decodes every stream of a multi-stream file${missing}`, async () => {
    const path = join(dir, `multi-${d}.bz2`);
    writeFileSync(path, Buffer.concat([bz('first\n'), bz('second\n'), bz('third\n')]));
    assert.equal(await decodeAll(path, d), 'first\nsecond\nthird\n');
  });

  decoderTest(`${d}: a truncated file fails with BATCH_CORRUPT, never a silent short read${missing}`, async () => {
    const full = bz('x'.repeat(200_000) + '\n');
    const path = join(dir, `trunc-${d}.bz2`);
    writeFileSync(path, full.subarray(0, Math.floor(full.length / 2)));
    await assert.rejects(decodeAll(path, d), (e: { code?: string }) => e.code === 'BATCH_CORRUPT');
  });

  decoderTest(`${d}: decodes a byte stream (an HTTP body) as well as a file${missing}`, async () => {
    async function* body(): AsyncGenerator<Buffer> {
      const b = Buffer.concat([bz('a\n'), bz('b\n')]);
      for (let i = 0; i < b.length; i += 7) yield b.subarray(i, i + 7);
    }
    const parts: Buffer[] = [];
    for await (const b of decodeStream(body(), 'bz2', { decoder: d })) parts.push(b);
    assert.equal(Buffer.concat(parts).toString(), 'a\nb\n');
  });
}

test('gzip files decode, and a corrupt one fails with BATCH_CORRUPT', async () => {
  const ok = join(dir, 'ok.gz');
  writeFileSync(ok, gzipSync('hello\n'));
  assert.equal(await decodeAll(ok, 'auto', 'gz'), 'hello\n');
  const bad = join(dir, 'bad.gz');
  writeFileSync(bad, gzipSync('hello world\n').subarray(0, 12));
  await assert.rejects(decodeAll(bad, 'auto', 'gz'), (e: { code?: string }) => e.code === 'BATCH_CORRUPT');
  // larger than many output buffers of the decoder: every byte, in order
  const text = Array.from({ length: 40_000 }, (_, i) => `{"line":${i},"pad":"${'x'.repeat(i % 97)}"}\n`).join('');
  const big = join(dir, 'big.gz');
  writeFileSync(big, gzipSync(text));
  assert.equal(await decodeAll(big, 'auto', 'gz'), text);
  // no gzip at all, larger than the decoder's input buffer: it fails at once, never waits on its input
  const noise = join(dir, 'noise.gz');
  writeFileSync(noise, randomBytes(100_000));
  await assert.rejects(decodeAll(noise, 'auto', 'gz'), (e: { code?: string; message?: string }) => {
    assert.equal(e.code, 'BATCH_CORRUPT');
    assert.match(e.message ?? '', /gzip decode failed/);
    return true;
  });
});

test('a decoder that is not installed is a clear DECODER_UNAVAILABLE error naming the fix', () => {
  assert.throws(
    () => resolveBzip2Decoder('nonexistent' as DecoderChoice),
    (e: { code?: string; message: string }) => e.code === 'DECODER_UNAVAILABLE' && /apt-get install lbzip2/.test(e.message),
  );
});
