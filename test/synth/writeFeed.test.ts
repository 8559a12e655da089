import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, test } from 'vitest';
import { addMinutes } from '../../src/minute/index.js';
import { MALFORMED_KINDS, writeFeed, type FeedManifest, type MalformedKind } from '../../src/synth/index.js';
import { batchLines, classify, readBatch, tempDir, type LineVerdict } from './helpers.js';

const tmp = tempDir('synth-feed-');
afterAll(tmp.cleanup);
let n = 0;
const outDir = (): string => join(tmp.dir, String(n++));

/** What an independent reader expects a planted kind to look like. */
const EXPECTED_WHY: Record<MalformedKind, Array<Extract<LineVerdict, { ok: false }>['why']>> = {
  not_json: ['parse'],
  truncated_json: ['parse'],
  json_array: ['array'],
  json_number: ['number'],
  bad_id_not_hex: ['bad_id'],
  bad_id_no_underscore: ['bad_id'],
  missing_id: ['missing_id'],
};

/** Re-reads every file with bzip2/zlib and checks the manifest says exactly what is there. */
function verifyManifest(dir: string, m: FeedManifest): void {
  assert.deepEqual(JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')), m);
  const ids = new Map<string, Array<{ minute: string; line: number; lmd: number }>>();
  let bytes = 0;
  for (const f of m.files) {
    const lines = batchLines(join(dir, f.file));
    assert.equal(lines.length, f.lines, `${f.file} line count`);
    const malformed = new Map(f.malformed.map((e) => [e.line, e.kind]));
    const inFile = new Set<string>();
    let fileBytes = 0;
    lines.forEach((text, i) => {
      fileBytes += Buffer.byteLength(text) + 1;
      const v = classify(text);
      const planted = malformed.get(i + 1);
      if (planted) {
        assert.equal(v.ok, false, `${f.file}:${i + 1} planted ${planted} but parses as a record`);
        if (!v.ok) assert.ok(EXPECTED_WHY[planted].includes(v.why), `${f.file}:${i + 1} ${planted} read as ${v.why}`);
        return;
      }
      assert.ok(v.ok, `${f.file}:${i + 1} should be a record: ${text.slice(0, 120)}`);
      if (!v.ok) return;
      assert.ok(!inFile.has(v.id), `${v.id} twice in ${f.file}`);
      inFile.add(v.id);
      const lmd = (v.record.attributes as { last_modification_date: number }).last_modification_date;
      const list = ids.get(v.id) ?? [];
      list.push({ minute: f.minute, line: i + 1, lmd });
      ids.set(v.id, list);
    });
    assert.equal(f.records, f.lines - f.malformed.length);
    assert.equal(f.bytesUncompressed, fileBytes);
    bytes += fileBytes;
  }
  assert.equal(m.bytesUncompressed, bytes);
  assert.deepEqual(m.expectedIds, [...ids.keys()].sort());
  // Every repeated id is a listed update, in a later minute, with a newer last_modification_date.
  const updatesById = new Map<string, number>();
  for (const u of m.updates) {
    updatesById.set(u.id, (updatesById.get(u.id) ?? 0) + 1);
    const occ = ids.get(u.id)!;
    assert.ok(
      occ.some((o) => o.minute === u.minute && o.line === u.line && o.lmd === u.lastModificationDate),
      `update ${u.id} at ${u.minute}:${u.line}`,
    );
    assert.ok(occ.some((o) => o.minute === u.previous.minute && o.line === u.previous.line && o.lmd === u.previous.lastModificationDate));
    assert.ok(u.minute > u.previous.minute && u.lastModificationDate > u.previous.lastModificationDate);
  }
  for (const [id, occ] of ids) assert.equal(occ.length, 1 + (updatesById.get(id) ?? 0), `occurrences of ${id}`);
  for (const miss of m.missing) assert.ok(!m.files.some((f) => f.minute === miss));
  const names = readdirSync(dir)
    .filter((x) => x !== 'manifest.json')
    .sort();
  assert.deepEqual(names, m.files.map((f) => f.file).sort());
}

test('same seed gives identical bytes; another seed does not', async () => {
  const opts = { seed: 42, minutes: 3, perMinute: 30, malformedRate: 0.05, bigRate: 0.05 };
  const a = outDir();
  const b = outDir();
  const c = outDir();
  const ma = await writeFeed({ ...opts, out: a });
  await writeFeed({ ...opts, out: b });
  await writeFeed({ ...opts, seed: 43, out: c });
  for (const f of [...ma.files.map((x) => x.file), 'manifest.json']) {
    assert.ok(readFileSync(join(a, f)).equals(readFileSync(join(b, f))), `${f} differs between runs`);
  }
  assert.notEqual(readFileSync(join(a, ma.files[0]!.file)).toString('hex'), readFileSync(join(c, ma.files[0]!.file)).toString('hex'));
});

test('the manifest matches the written bz2 files (missing minute, malformed lines, updates)', async () => {
  const dir = outDir();
  const start = '202611010000';
  const m = await writeFeed({
    out: dir,
    seed: 9,
    start,
    minutes: 8,
    perMinute: 60,
    malformedRate: 0.05,
    bigRate: 0.02,
    missingMinutes: [addMinutes(start, 5)],
    variants: { update: 0.1 },
  });
  assert.equal(m.minutes, 8);
  assert.deepEqual(m.missing, ['202611010005']);
  assert.equal(m.files.length, 7);
  assert.ok(!existsSync(join(dir, '202611010005.jsonl.bz2')));
  assert.ok(m.updates.length > 5, `updates ${m.updates.length}`);
  assert.equal(m.variants.update, m.updates.length);
  const kinds = new Set(m.files.flatMap((f) => f.malformed.map((e) => e.kind)));
  assert.deepEqual([...kinds].sort(), [...MALFORMED_KINDS].sort());
  assert.equal(m.records + m.malformedLines, 7 * 60);
  assert.ok(m.bytesCompressed > 0 && m.bytesCompressed < m.bytesUncompressed);
  verifyManifest(dir, m);
});

test('multi-stream bz2 holds two streams and decompresses fully with bzip2 -dc', async () => {
  const dir = outDir();
  const m = await writeFeed({ out: dir, seed: 4, minutes: 2, perMinute: 40, multiStream: true, compressor: 'bzip2' });
  assert.equal(m.multiStream, true);
  for (const f of m.files) {
    const raw = readFileSync(join(dir, f.file));
    // Each bzip2 stream starts byte-aligned with "BZh9" and the block magic.
    let streams = 0;
    for (let i = raw.indexOf('BZh91AY&SY'); i >= 0; i = raw.indexOf('BZh91AY&SY', i + 1)) streams++;
    assert.equal(streams, 2, `${f.file} streams`);
    assert.ok(raw.subarray(0, 4).equals(Buffer.from('BZh9')));
    const all = execFileSync('bzip2', ['-dc', join(dir, f.file)], { encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(all.split('\n').length - 1, f.lines);
  }
  verifyManifest(dir, m);
});

test('gzip (multi-member too) and uncompressed output hold the same lines', async () => {
  const opts = { seed: 12, minutes: 2, perMinute: 25, malformedRate: 0.04 };
  const dg = outDir();
  const dgm = outDir();
  const dn = outDir();
  const mg = await writeFeed({ ...opts, out: dg, compression: 'gz' });
  const mgm = await writeFeed({ ...opts, out: dgm, compression: 'gz', multiStream: true });
  const mn = await writeFeed({ ...opts, out: dn, compression: 'none' });
  assert.equal(mg.files[0]!.file, '202611010000.jsonl.gz');
  assert.equal(mn.files[0]!.file, '202611010000.jsonl');
  assert.equal(mn.compressor, null);
  verifyManifest(dg, mg);
  verifyManifest(dgm, mgm);
  verifyManifest(dn, mn);
  for (const f of mn.files) {
    const plain = readFileSync(join(dn, f.file), 'utf8');
    assert.equal(execFileSync('gzip', ['-dc', join(dg, `${f.minute}.jsonl.gz`)], { encoding: 'utf8' }), plain);
    assert.equal(execFileSync('gzip', ['-dc', join(dgm, `${f.minute}.jsonl.gz`)], { encoding: 'utf8' }), plain);
  }
});

test('one oversize line of the asked size, a valid record', async () => {
  const dir = outDir();
  const size = 2_000_000;
  const m = await writeFeed({ out: dir, seed: 21, minutes: 3, perMinute: 10, oversizeBytes: size, compression: 'none' });
  assert.ok(m.oversize);
  assert.equal(m.oversize.minute, '202611010001');
  assert.equal(m.oversize.bytes, size);
  const lines = batchLines(join(dir, `${m.oversize.minute}.jsonl`));
  const line = lines[m.oversize.line - 1]!;
  assert.equal(Buffer.byteLength(line), size);
  const v = classify(line);
  assert.ok(v.ok && v.id === m.oversize.id);
  assert.ok(m.expectedIds.includes(m.oversize.id));
  assert.equal(lines.filter((l) => Buffer.byteLength(l) > 1_000_000).length, 1);
  verifyManifest(dir, m);
});

test('targetBytes keeps adding minutes; bad options are rejected', async () => {
  const dir = outDir();
  const m = await writeFeed({ out: dir, seed: 2, minutes: 1, perMinute: 20, bigRate: 0, targetBytes: 400_000, compression: 'none' });
  assert.ok(m.bytesUncompressed >= 400_000);
  assert.ok(m.minutes > 1 && m.files.length === m.minutes);
  assert.ok(m.bytesUncompressed - m.files.at(-1)!.bytesUncompressed < 400_000, 'stops at the first minute reaching the target');
  await assert.rejects(writeFeed({ out: outDir(), seed: 1, start: '202613010000' }), RangeError);
  await assert.rejects(writeFeed({ out: outDir(), seed: 1, malformedRate: 2 }), RangeError);
  await assert.rejects(writeFeed({ out: outDir(), seed: 1, variants: { update: -1 } }), RangeError);
  await assert.rejects(writeFeed({ out: outDir(), seed: 1, compressor: '/nonexistent/bzip2' }), /nonexistent/);
});

test('the bundled sample feed matches its manifest and regenerates to the same content', async () => {
  const sample = fileURLToPath(new URL('../../sample/feed', import.meta.url));
  const m = JSON.parse(readFileSync(join(sample, 'manifest.json'), 'utf8')) as FeedManifest;
  verifyManifest(sample, m);
  assert.ok(m.missing.length === 1 && m.malformedLines > 0 && m.updates.length > 0);
  // Same options, uncompressed: the content must be byte-identical to the decompressed sample.
  const dir = outDir();
  const again = await writeFeed({
    out: dir,
    seed: m.seed,
    start: m.start,
    minutes: m.minutes,
    perMinute: m.perMinute,
    malformedRate: m.malformedRate,
    bigRate: m.bigRate,
    variants: m.variantRates,
    missingMinutes: m.missing,
    compression: 'none',
  });
  assert.deepEqual(again.expectedIds, m.expectedIds);
  for (const f of m.files) assert.equal(readFileSync(join(dir, `${f.minute}.jsonl`), 'utf8'), readBatch(join(sample, f.file)), f.file);
});
