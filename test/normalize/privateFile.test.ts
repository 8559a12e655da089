/** The private file report normalizer: identity (strict), attributes (lenient), hostile input. */
import assert from 'node:assert/strict';
import { describe, test } from 'vitest';
import {
  REJECT_CODES,
  WARNING_CODES,
  normalizePrivateFile,
  type NormalizeWarning,
  type PrivateFileDoc,
  type PrivateFileResult,
  type RejectCode,
  type Rejection,
} from '../../src/normalize/index.js';

const SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const SHA1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
const MD5 = 'd41d8cd98f00b204e9800998ecf8427e';
const AT = 1_767_225_600;

function accept(value: unknown): { doc: PrivateFileDoc; warnings: NormalizeWarning[] } {
  const r = normalizePrivateFile(value, { fetchedAt: AT });
  if (!r.ok) assert.fail(`expected acceptance, got ${JSON.stringify(r.rejection)}`);
  return r;
}

function rejection(r: PrivateFileResult): Rejection {
  if (r.ok) assert.fail(`expected a rejection, got a doc (${r.doc.id})`);
  assert.ok(REJECT_CODES.includes(r.rejection.code));
  return r.rejection;
}

/** The report wrapped as the API returns it. */
const wrapped = (attributes: Record<string, unknown>, id = SHA256): Record<string, unknown> => ({
  data: { type: 'private_file', id, attributes, links: { self: `https://x/api/v3/private/files/${id}` } },
});

/** Canonical attributes and warnings of a report holding only `attributes`. */
function canon(attributes: Record<string, unknown>): { doc: PrivateFileDoc; codes: [string, string][] } {
  const { doc, warnings } = accept(wrapped(attributes));
  return { doc, codes: warnings.map((w) => [w.code, w.path]) };
}

const GTI = {
  verdict: { value: 'VERDICT_MALICIOUS' },
  severity: { value: 'SEVERITY_HIGH' },
  threat_score: { value: 87 },
  contributing_factors: { mandiant_analyst_benign: false, gti_confidence_score: 90, normalised_categories: ['trojan', 'downloader'] },
  description: 'This indicator is malicious (high confidence).',
};

const FULL_ATTRIBUTES = {
  sha256: SHA256,
  sha1: SHA1,
  md5: MD5,
  size: 73_802,
  magic: 'PE32 executable (GUI) Intel 80386, for MS Windows',
  tags: ['peexe', 'overlay', 'signed'],
  exiftool: {
    MIMEType: 'application/octet-stream',
    FileType: 'Win32 EXE',
    FileTypeExtension: 'exe',
    MIMEEncoding: 'binary',
    LineCount: '1',
    WordCount: '4',
    Newlines: 'Unix LF',
  },
  trid: [
    { file_type: 'Win32 Executable MS Visual C++ (generic)', probability: 47.3 },
    { file_type: 'Win64 Executable (generic)', probability: 15.9 },
  ],
  vhash: '015036656d1d2\\"z?',
  ssdeep: '1536:JEl14rQcWAkN+Ymai4fZ/MFvhMsvRHGJ0ykJFH5SzjCRb:ru0Jk1y2/FtsvF2L5Sz',
  gti_assessment: GTI,
  first_seen_itw_date: 1_700_000_000,
  type_tags: ['executable', 'windows', 'win32', 'pe', 'peexe'],
};

describe('a full private file report', () => {
  test('the API response becomes the canonical document, unknown fields kept, no warning', () => {
    const { doc, warnings } = accept(wrapped(FULL_ATTRIBUTES));
    assert.deepEqual(warnings, []);
    assert.deepEqual(doc, {
      schema_version: 1,
      type: 'private_file',
      id: SHA256,
      sha256: SHA256,
      sha1: SHA1,
      md5: MD5,
      size: 73_802,
      magic: FULL_ATTRIBUTES.magic,
      tags: FULL_ATTRIBUTES.tags,
      exiftool: FULL_ATTRIBUTES.exiftool,
      trid: FULL_ATTRIBUTES.trid,
      vhash: FULL_ATTRIBUTES.vhash,
      ssdeep: FULL_ATTRIBUTES.ssdeep,
      gti_assessment: GTI,
      attributes: FULL_ATTRIBUTES,
      fetched_at: AT,
    });
    // a pure JSON copy: nothing of the input is shared, and it survives a JSON round trip as is
    assert.notEqual(doc.gti_assessment, GTI);
    assert.notEqual(doc.attributes, FULL_ATTRIBUTES);
    assert.deepEqual(JSON.parse(JSON.stringify(doc)), doc);
  });

  test('bare data object and wrapped response give the same document', () => {
    const w = accept(wrapped(FULL_ATTRIBUTES));
    const bare = accept((wrapped(FULL_ATTRIBUTES) as { data: unknown }).data);
    assert.deepEqual(bare, w);
    // type is optional on the bare object
    assert.deepEqual(accept({ id: SHA256, attributes: FULL_ATTRIBUTES }).doc, w.doc);
  });

  test('absent attributes give the empty values, with missing_attributes; fetched_at defaults to now', () => {
    const before = Math.floor(Date.now() / 1000);
    const r = normalizePrivateFile({ data: { type: 'private_file', id: SHA256 } });
    assert.ok(r.ok);
    assert.deepEqual(
      r.warnings.map((w) => [w.code, w.path]),
      [['missing_attributes', '$.data.attributes']],
    );
    const { fetched_at, ...rest } = r.doc;
    assert.ok(fetched_at >= before && fetched_at <= Math.floor(Date.now() / 1000) + 1);
    assert.deepEqual(rest, {
      schema_version: 1,
      type: 'private_file',
      id: SHA256,
      sha256: SHA256,
      sha1: null,
      md5: null,
      size: null,
      magic: null,
      tags: [],
      exiftool: {},
      trid: [],
      vhash: null,
      ssdeep: null,
      gti_assessment: null,
      attributes: {},
    });
  });

  test('fetchedAt: fractions are truncated, nonsense is a caller error', () => {
    const r = normalizePrivateFile({ id: SHA256, attributes: {} }, { fetchedAt: 12.9 });
    assert.equal(r.ok && r.doc.fetched_at, 12);
    for (const bad of [-1, Number.NaN, Infinity, '5' as unknown as number]) {
      assert.throws(() => normalizePrivateFile({ id: SHA256 }, { fetchedAt: bad }), RangeError);
    }
  });
});

describe('hashes', () => {
  test('upper-case id and hashes are lower-cased, each with a lowercased warning; vhash and ssdeep keep their case', () => {
    const { doc, warnings } = accept({
      data: {
        type: 'private_file',
        id: SHA256.toUpperCase(),
        attributes: { sha256: SHA256.toUpperCase(), sha1: SHA1.toUpperCase(), md5: MD5.toUpperCase(), vhash: 'AbC', ssdeep: '3:AB:c' },
      },
    });
    assert.deepEqual([doc.id, doc.sha256, doc.sha1, doc.md5, doc.vhash, doc.ssdeep], [SHA256, SHA256, SHA1, MD5, 'AbC', '3:AB:c']);
    assert.deepEqual(doc.attributes.sha256, SHA256);
    assert.deepEqual(
      warnings.map((w) => [w.code, w.path]),
      [
        ['lowercased', '$.data.id'],
        ['lowercased', '$.data.attributes.sha256'],
        ['lowercased', '$.data.attributes.sha1'],
        ['lowercased', '$.data.attributes.md5'],
      ],
    );
  });

  test('attributes.sha256 naming another file: warning, the id wins', () => {
    for (const other of ['f'.repeat(64), 'not a hash', 42]) {
      const { doc, codes } = canon({ sha256: other });
      assert.equal(doc.sha256, SHA256);
      assert.equal(doc.attributes.sha256, SHA256);
      assert.deepEqual(codes, [['dropped_field', '$.data.attributes.sha256']]);
    }
  });

  test('malformed sha1 / md5 are dropped (null), never repaired', () => {
    const cases: unknown[] = [MD5, `${SHA1}0`, 'g'.repeat(40), ` ${SHA1}`, 1234, ['x'], {}];
    for (const bad of cases) {
      const { doc, codes } = canon({ sha1: bad, md5: bad === MD5 ? SHA1 : bad });
      assert.equal(doc.sha1, null, String(bad));
      assert.equal(doc.md5, null, String(bad));
      assert.ok(!('sha1' in doc.attributes) && !('md5' in doc.attributes));
      assert.deepEqual(codes, [
        ['dropped_field', '$.data.attributes.sha1'],
        ['dropped_field', '$.data.attributes.md5'],
      ]);
    }
    // null means absent: no warning
    assert.deepEqual(canon({ sha1: null, md5: null }).codes, []);
  });
});

describe('lenient attribute types', () => {
  test('size: numeric string and fraction coerced; negative, huge and non-numeric dropped', () => {
    assert.deepEqual(canon({ size: '73802' }).doc.size, 73802);
    assert.deepEqual(canon({ size: '73802' }).codes, [['coerced_scalar', '$.data.attributes.size']]);
    assert.deepEqual(canon({ size: 12.7 }).doc.size, 12);
    for (const bad of [-1, 2 ** 60, 'big', true, {}]) {
      const { doc, codes } = canon({ size: bad });
      assert.equal(doc.size, null, String(bad));
      assert.equal(codes.at(-1)?.[0], 'dropped_field');
      assert.ok(!('size' in doc.attributes));
    }
  });

  test('magic, vhash, ssdeep: numbers stringified, objects dropped', () => {
    const { doc, codes } = canon({ magic: 42, vhash: true, ssdeep: ['x'] });
    assert.deepEqual([doc.magic, doc.vhash, doc.ssdeep], ['42', 'true', null]);
    assert.deepEqual(codes, [
      ['coerced_scalar', '$.data.attributes.magic'],
      ['coerced_scalar', '$.data.attributes.vhash'],
      ['dropped_field', '$.data.attributes.ssdeep'],
    ]);
  });

  test('tags: a lone string is wrapped, non-strings dropped', () => {
    assert.deepEqual(canon({ tags: 'peexe' }).doc.tags, ['peexe']);
    assert.deepEqual(canon({ tags: 'peexe' }).codes, [['coerced_scalar', '$.data.attributes.tags']]);
    const { doc, codes } = canon({ tags: ['a', null, { x: 1 }, 'b'] });
    assert.deepEqual(doc.tags, ['a', 'b']);
    assert.deepEqual(codes, [
      ['dropped_item', '$.data.attributes.tags[1]'],
      ['dropped_item', '$.data.attributes.tags[2]'],
    ]);
    assert.deepEqual(canon({ tags: { a: 1 } }).codes, [['dropped_field', '$.data.attributes.tags']]);
    assert.deepEqual(canon({ tags: { a: 1 } }).doc.tags, []);
  });

  test('exiftool: numbers and booleans stringified, objects, arrays and null dropped', () => {
    const { doc, codes } = canon({
      exiftool: { LineCount: 12, Encrypted: false, FileType: 'ZIP', Nested: { a: 1 }, List: ['a'], Missing: null, 'Odd Key': 'ok' },
    });
    assert.deepEqual(doc.exiftool, { LineCount: '12', Encrypted: 'false', FileType: 'ZIP', 'Odd Key': 'ok' });
    assert.deepEqual(codes, [
      ['coerced_scalar', '$.data.attributes.exiftool.LineCount'],
      ['coerced_scalar', '$.data.attributes.exiftool.Encrypted'],
      ['dropped_item', '$.data.attributes.exiftool.Nested'],
      ['dropped_item', '$.data.attributes.exiftool.List'],
      ['dropped_item', '$.data.attributes.exiftool.Missing'],
    ]);
    assert.deepEqual(canon({ exiftool: 'MIMEType: text/plain' }).codes, [['dropped_field', '$.data.attributes.exiftool']]);
    assert.deepEqual(canon({ exiftool: 'MIMEType: text/plain' }).doc.exiftool, {});
  });

  test('trid: probability strings parsed, entries without file_type or probability dropped, a lone entry wrapped', () => {
    const { doc, codes } = canon({
      trid: [
        { file_type: 'ZIP compressed archive', probability: '80.5' },
        { probability: 10 },
        { file_type: 'Generic', probability: 'n/a' },
        'UPX',
        { file_type: 7, probability: 9.5, extra: 'kept' },
      ],
    });
    assert.deepEqual(doc.trid, [
      { file_type: 'ZIP compressed archive', probability: 80.5 },
      { file_type: '7', probability: 9.5, extra: 'kept' },
    ]);
    assert.deepEqual(codes, [
      ['coerced_scalar', '$.data.attributes.trid[0].probability'],
      ['dropped_item', '$.data.attributes.trid[1]'],
      ['dropped_item', '$.data.attributes.trid[2]'],
      ['dropped_item', '$.data.attributes.trid[3]'],
      ['coerced_scalar', '$.data.attributes.trid[4].file_type'],
    ]);
    const lone = canon({ trid: { file_type: 'Text', probability: 100 } });
    assert.deepEqual(lone.doc.trid, [{ file_type: 'Text', probability: 100 }]);
    assert.deepEqual(lone.codes, [['coerced_scalar', '$.data.attributes.trid']]);
    assert.deepEqual(canon({ trid: 'Text' }).codes, [['dropped_field', '$.data.attributes.trid']]);
  });

  test('gti_assessment and unknown attributes are kept whole, whatever their shape', () => {
    for (const gti of [GTI, 'opaque', [1, { a: [] }], 0, false]) {
      const { doc, codes } = canon({ gti_assessment: gti, future_field: { deep: [{ x: null }] } });
      assert.deepEqual(doc.gti_assessment, gti);
      assert.deepEqual(doc.attributes.gti_assessment, gti);
      assert.deepEqual(doc.attributes.future_field, { deep: [{ x: null }] });
      assert.deepEqual(codes, []);
    }
    assert.equal(canon({ gti_assessment: null }).doc.gti_assessment, null);
  });

  test('every warning carries a known code and a JSON path', () => {
    const { warnings } = accept(wrapped({ size: 'x', tags: [1, null], exiftool: { a: 1 }, trid: [{}], md5: 'x', extra: 1 }));
    assert.ok(warnings.length > 0);
    for (const w of warnings) {
      assert.ok(WARNING_CODES.includes(w.code), w.code);
      assert.ok(w.path.startsWith('$.data.attributes'), w.path);
    }
  });

  test('unknown top-level fields are reported and not kept', () => {
    const { doc, warnings } = accept({ id: SHA256, attributes: {}, relationships: { x: 1 } });
    assert.deepEqual(
      warnings.map((w) => [w.code, w.path]),
      [['dropped_field', '$.relationships']],
    );
    assert.ok(!('relationships' in doc));
  });
});

describe('identity is strict', () => {
  const cases: { name: string; value: unknown; code: RejectCode; path: string }[] = [
    { name: 'not an object', value: 'x', code: 'not_object', path: '$' },
    { name: 'data not an object', value: { data: [SHA256] }, code: 'not_object', path: '$.data' },
    { name: 'behaviour type', value: { data: { type: 'file_behaviour', id: SHA256 } }, code: 'wrong_type', path: '$.data.type' },
    { name: 'public file type', value: { type: 'file', id: SHA256 }, code: 'wrong_type', path: '$.type' },
    { name: 'type null', value: { type: null, id: SHA256 }, code: 'wrong_type', path: '$.type' },
    { name: 'id absent', value: { data: { type: 'private_file', attributes: {} } }, code: 'missing_id', path: '$.data.id' },
    { name: 'id null', value: { id: null }, code: 'missing_id', path: '$.id' },
    { name: 'id number', value: { id: 12 }, code: 'bad_id', path: '$.id' },
    { name: 'id empty', value: { id: '' }, code: 'bad_id', path: '$.id' },
    { name: 'id 63 hex', value: { id: SHA256.slice(1) }, code: 'bad_id', path: '$.id' },
    { name: 'id 65 hex', value: { id: `${SHA256}a` }, code: 'bad_id', path: '$.id' },
    { name: 'id non-hex', value: { id: 'g'.repeat(64) }, code: 'bad_id', path: '$.id' },
    { name: 'id padded', value: { id: ` ${SHA256}` }, code: 'bad_id', path: '$.id' },
    { name: 'id md5', value: { id: MD5 }, code: 'bad_id', path: '$.id' },
    { name: 'behaviour id', value: { id: `${SHA256}_Zenbox` }, code: 'bad_id', path: '$.id' },
    { name: 'attributes array', value: { id: SHA256, attributes: [] }, code: 'bad_attributes', path: '$.attributes' },
    { name: 'attributes null', value: { data: { id: SHA256, attributes: null } }, code: 'bad_attributes', path: '$.data.attributes' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = rejection(normalizePrivateFile(c.value, { fetchedAt: AT }));
      assert.deepEqual([r.code, r.path], [c.code, c.path]);
      assert.ok(r.message.length > 0);
    });
  }
});

describe('hostile values never throw', () => {
  const throwing = (key: string, base: Record<string, unknown> = {}): Record<string, unknown> =>
    Object.defineProperty(base, key, {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });

  test('a throwing getter in the envelope, in an attribute, deep in an unknown attribute', () => {
    assert.deepEqual(
      [rejection(normalizePrivateFile(throwing('id'))).code, rejection(normalizePrivateFile(throwing('data'))).code],
      ['not_object', 'not_object'],
    );
    const inAttr = rejection(normalizePrivateFile({ id: SHA256, attributes: throwing('exiftool') }));
    assert.deepEqual([inAttr.code, inAttr.path], ['bad_attributes', '$.attributes']);
    const deep = rejection(normalizePrivateFile({ id: SHA256, attributes: { future: { x: [throwing('y')] } } }));
    assert.deepEqual([deep.code, deep.path], ['unserializable', '$.attributes']);
  });

  test('a proxy whose traps throw, a BigInt, a cycle', () => {
    const proxy = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('trap');
        },
        getOwnPropertyDescriptor() {
          throw new Error('trap');
        },
      },
    );
    assert.equal(rejection(normalizePrivateFile(proxy)).code, 'not_object');
    assert.equal(rejection(normalizePrivateFile({ id: SHA256, attributes: proxy })).code, 'bad_attributes');
    assert.equal(rejection(normalizePrivateFile({ id: SHA256, attributes: { gti_assessment: { n: 10n } } })).code, 'unserializable');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.equal(rejection(normalizePrivateFile({ id: SHA256, attributes: { gti_assessment: cycle } })).code, 'too_deep');
  });

  test('deep nesting: refused too_deep past the limit without a stack overflow, kept below it', () => {
    let nest: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) nest = { n: nest };
    const r = rejection(normalizePrivateFile({ id: SHA256, attributes: { gti_assessment: nest } }));
    assert.deepEqual([r.code, r.path], ['too_deep', '$']);
    let ok: unknown = 'leaf';
    for (let i = 0; i < 150; i++) ok = [ok];
    assert.deepEqual(accept({ id: SHA256, attributes: { future: ok } }).doc.attributes.future, ok);
    assert.equal(rejection(normalizePrivateFile({ id: SHA256, attributes: { future: ok } }, { maxDepth: 100 })).code, 'too_deep');
  });

  test('__proto__ and constructor attributes are data, not prototype changes', () => {
    const raw = JSON.parse(
      `{"id":"${SHA256}","attributes":{"__proto__":{"polluted":1},"constructor":"x","exiftool":{"__proto__":"y"}}}`,
    ) as unknown;
    const { doc } = accept(raw);
    assert.deepEqual(Object.keys(doc.attributes), ['__proto__', 'constructor', 'exiftool']);
    assert.equal(Object.getPrototypeOf(doc.attributes), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.deepEqual(Object.entries(doc.exiftool), [['__proto__', 'y']]);
  });
});
