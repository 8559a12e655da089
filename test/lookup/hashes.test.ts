import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'vitest';
import { classifyHash, collectHashes } from '../../src/lookup/index.js';
import { tempDir } from '../support/env.js';

const MD5 = 'D41D8CD98F00B204E9800998ECF8427E';
const SHA1 = 'da39a3ee5e6b4b0d3255BFEF95601890afd80709';
const SHA256 = 'E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855';

test('classifyHash: MD5, SHA-1 and SHA-256 in any case are sent lower-case; the given text is kept as given', () => {
  assert.deepEqual(classifyHash(MD5), { given: MD5, hash: MD5.toLowerCase(), kind: 'md5' });
  assert.deepEqual(classifyHash(SHA1), { given: SHA1, hash: SHA1.toLowerCase(), kind: 'sha1' });
  assert.deepEqual(classifyHash(SHA256), { given: SHA256, hash: SHA256.toLowerCase(), kind: 'sha256' });
  assert.deepEqual(classifyHash(SHA256.toLowerCase()), { given: SHA256.toLowerCase(), hash: SHA256.toLowerCase(), kind: 'sha256' });
  // surrounding blanks are not part of the hash
  assert.deepEqual(classifyHash(`  ${MD5}\t`), { given: `  ${MD5}\t`, hash: MD5.toLowerCase(), kind: 'md5' });
});

test('classifyHash refuses what is not 32, 40 or 64 hex characters', () => {
  const refused = [
    SHA256.slice(0, 63),
    `${SHA256}0`,
    SHA1.slice(0, 39),
    MD5.slice(0, 31),
    `${MD5.slice(0, 31)}g`,
    `${SHA256.slice(0, 63)}Z`,
    '',
    '   ',
    '0x' + MD5.slice(2),
    `${MD5.slice(0, 16)} ${MD5.slice(17)}`,
    'not-a-hash',
  ];
  for (const given of refused) {
    const h = classifyHash(given);
    assert.ok('refused' in h, `${JSON.stringify(given)} refused`);
    assert.equal(h.given, given);
    assert.match(h.refused, /not an MD5, SHA-1 or SHA-256/);
    assert.ok(!('hash' in h));
  }
});

test('collectHashes: arguments first, then list files; comments, blank lines and duplicates (after lower-casing) dropped, order kept', async () => {
  const dir = tempDir();
  const a = join(dir, 'a.txt');
  const b = join(dir, 'b.txt');
  writeFileSync(
    a,
    [
      '# hashes from the incident',
      '',
      `${SHA256.toLowerCase()}`,
      `   ${SHA1}   # the sha1, upper and lower case mixed`,
      '\t',
      MD5.toLowerCase(),
      'zzzz # refused, but listed',
      `${MD5}`,
    ].join('\r\n'),
  );
  writeFileSync(b, `${SHA256.toUpperCase()}\n# nothing else\nzzzz\n${SHA1.toUpperCase()}\n\n`);

  const dropped: number[] = [];
  const got = await collectHashes([MD5, SHA256, 'bad'], [a, b], (n) => dropped.push(n));
  // said once: MD5 twice and SHA-256 once more in a.txt; SHA-256, zzzz and SHA-1 again in b.txt
  assert.deepEqual(dropped, [6]);
  assert.deepEqual(
    got.map((h) => ('hash' in h ? [h.kind, h.hash] : ['refused', h.given])),
    [
      ['md5', MD5.toLowerCase()],
      ['sha256', SHA256.toLowerCase()],
      ['refused', 'bad'],
      ['sha1', SHA1.toLowerCase()],
      ['refused', 'zzzz'],
    ],
  );
  // the first spelling of a duplicate is the one kept
  assert.equal(got[0]?.given, MD5);
  assert.equal(got[3]?.given, SHA1);

  const none: number[] = [];
  assert.deepEqual(await collectHashes([], [], (n) => none.push(n)), []);
  assert.deepEqual(none, [], 'nothing dropped, nothing said');
  assert.deepEqual(
    (await collectHashes([], [b])).map((h) => h.given),
    [SHA256.toUpperCase(), 'zzzz', SHA1.toUpperCase()],
  );
});

test('collectHashes: a list file that cannot be read is a usage error naming it', async () => {
  const missing = join(tempDir(), 'nope.txt');
  await assert.rejects(collectHashes([MD5], [missing]), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'USAGE');
    assert.ok(err.message.includes(missing));
    return true;
  });
});
