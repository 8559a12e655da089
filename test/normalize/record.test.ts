/** Envelope, identity, rejections, dates, sandbox name and feed-line extras. */
import { describe, test } from 'vitest';
import assert from 'node:assert/strict';
import { normalizeLine, normalizeRecord, type RejectCode } from '../../src/normalize/index.js';
import { ID, SANDBOX, SHA, accept, record, rejectionOf } from './helpers.js';

describe('rejections carry the exact code and path', () => {
  const cases: { name: string; line: string; code: RejectCode; path: string }[] = [
    { name: 'not JSON', line: '{"id": ', code: 'not_json', path: '$' },
    { name: 'empty line', line: '', code: 'not_json', path: '$' },
    { name: 'array', line: '[1,2]', code: 'not_object', path: '$' },
    { name: 'null', line: 'null', code: 'not_object', path: '$' },
    { name: 'number', line: '42', code: 'not_object', path: '$' },
    { name: 'string', line: '"x"', code: 'not_object', path: '$' },
    { name: 'data not an object', line: '{"data": [{"id": "x"}]}', code: 'not_object', path: '$.data' },
    { name: 'wrong type', line: JSON.stringify({ type: 'file', id: ID, attributes: {} }), code: 'wrong_type', path: '$.type' },
    { name: 'type null', line: JSON.stringify({ type: null, id: ID }), code: 'wrong_type', path: '$.type' },
    { name: 'wrapped wrong type', line: JSON.stringify({ data: { type: 'file', id: ID } }), code: 'wrong_type', path: '$.data.type' },
    { name: 'id absent', line: JSON.stringify({ type: 'file_behaviour', attributes: {} }), code: 'missing_id', path: '$.id' },
    { name: 'id null', line: JSON.stringify({ id: null, attributes: {} }), code: 'missing_id', path: '$.id' },
    { name: 'wrapped id absent', line: JSON.stringify({ data: { attributes: {} } }), code: 'missing_id', path: '$.data.id' },
    { name: 'id number', line: JSON.stringify({ id: 12 }), code: 'bad_id', path: '$.id' },
    { name: 'id empty', line: JSON.stringify({ id: '' }), code: 'bad_id', path: '$.id' },
    { name: 'id hash only', line: JSON.stringify({ id: SHA }), code: 'bad_id', path: '$.id' },
    { name: 'id empty sandbox', line: JSON.stringify({ id: `${SHA}_` }), code: 'bad_id', path: '$.id' },
    { name: 'id 63 hex', line: JSON.stringify({ id: `${SHA.slice(1)}_Zenbox` }), code: 'bad_id', path: '$.id' },
    { name: 'id 65 hex', line: JSON.stringify({ id: `${SHA}a_Zenbox` }), code: 'bad_id', path: '$.id' },
    { name: 'id non-hex', line: JSON.stringify({ id: `${'g'.repeat(64)}_Zenbox` }), code: 'bad_id', path: '$.id' },
    { name: 'id dash separator', line: JSON.stringify({ id: `${SHA}-Zenbox` }), code: 'bad_id', path: '$.id' },
    { name: 'id blank sandbox', line: JSON.stringify({ id: `${SHA}_   ` }), code: 'bad_id', path: '$.id' },
    { name: 'id padded sandbox', line: JSON.stringify({ id: `${SHA}_Zenbox ` }), code: 'bad_id', path: '$.id' },
    { name: 'id control char', line: JSON.stringify({ id: `${SHA}_Zen\nbox` }), code: 'bad_id', path: '$.id' },
    { name: 'id too long', line: JSON.stringify({ id: `${SHA}_${'x'.repeat(500)}` }), code: 'bad_id', path: '$.id' },
    { name: 'attributes array', line: JSON.stringify({ id: ID, attributes: [] }), code: 'bad_attributes', path: '$.attributes' },
    { name: 'attributes null', line: JSON.stringify({ id: ID, attributes: null }), code: 'bad_attributes', path: '$.attributes' },
    { name: 'attributes string', line: JSON.stringify({ id: ID, attributes: '{}' }), code: 'bad_attributes', path: '$.attributes' },
    {
      name: 'wrapped attributes',
      line: JSON.stringify({ data: { id: ID, attributes: 1 } }),
      code: 'bad_attributes',
      path: '$.data.attributes',
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = rejectionOf(normalizeLine(c.line));
      assert.equal(r.code, c.code);
      assert.equal(r.path, c.path);
      assert.ok(r.message.length > 0);
    });
  }

  test('a non-string line is not_json, not an exception', () => {
    assert.equal(rejectionOf(normalizeLine(undefined as unknown as string)).code, 'not_json');
  });

  test('throwing getters end as a rejection', () => {
    const hostile = Object.defineProperty({ id: ID }, 'attributes', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    assert.equal(rejectionOf(normalizeRecord(hostile)).code, 'not_object');
    const attrs = Object.defineProperty({}, 'tags', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    const r = rejectionOf(normalizeRecord({ id: ID, attributes: attrs }));
    assert.deepEqual([r.code, r.path], ['bad_attributes', '$.attributes']);
  });
});

describe('identity', () => {
  test('upper-case hex is lower-cased in id and sha256; the sandbox part stays verbatim', () => {
    const { doc, warnings } = accept({ id: `${SHA.toUpperCase()}_CAPE Sandbox`, attributes: { last_modification_date: 5 } });
    assert.equal(doc.id, `${SHA}_CAPE Sandbox`);
    assert.equal(doc.sha256, SHA);
    assert.equal(doc.sandbox_name, 'CAPE Sandbox');
    assert.deepEqual(warnings, [{ code: 'lowercased', path: '$.id', message: 'sha256 part of the id was not lower-case' }]);
  });

  test('a private-analysis timestamp suffix is kept in the id and removed from sandbox_name', () => {
    const { doc, warnings } = accept({ id: `${SHA}_Zenbox-1700000000`, attributes: { last_modification_date: 5 } });
    assert.equal(doc.id, `${SHA}_Zenbox-1700000000`);
    assert.equal(doc.sandbox_name, 'Zenbox');
    assert.deepEqual(warnings, []);
  });

  test('attributes.sandbox_name wins; equal modulo the suffix is not a mismatch', () => {
    const { doc, warnings } = accept({ id: `${SHA}_Zenbox-1700000017`, attributes: { sandbox_name: 'Zenbox', last_modification_date: 5 } });
    assert.equal(doc.sandbox_name, 'Zenbox');
    assert.deepEqual(warnings, []);
  });

  test("an attribute's private-analysis suffix is removed too: one sandbox name however the report spells it", () => {
    for (const attr of ['Zenbox-1700000017', 'Zenbox-1700000017123']) {
      const { doc, warnings } = accept({ id: `${SHA}_Zenbox-1700000017`, attributes: { sandbox_name: attr, last_modification_date: 5 } });
      assert.equal(doc.sandbox_name, 'Zenbox', attr);
      assert.equal(doc.attributes.sandbox_name, attr, 'the attribute itself is kept as given');
      assert.deepEqual(warnings, []);
    }
  });

  test('a sandbox name ending in a version number is not a private-analysis suffix', () => {
    for (const name of ['Windows-10', 'Android-11', 'VM-20240101']) {
      assert.equal(accept({ id: `${SHA}_${name}`, attributes: { last_modification_date: 5 } }).doc.sandbox_name, name);
      const { doc, warnings } = accept({ id: `${SHA}_${name}`, attributes: { sandbox_name: name, last_modification_date: 5 } });
      assert.deepEqual([doc.sandbox_name, warnings], [name, []]);
    }
  });

  test('a mismatching attributes.sandbox_name is a warning, not a rejection', () => {
    const { doc, warnings } = accept({ id: ID, attributes: { sandbox_name: 'Zenbox', last_modification_date: 5 } });
    assert.equal(doc.id, ID);
    assert.equal(doc.sandbox_name, 'Zenbox');
    assert.deepEqual(
      warnings.map((w) => [w.code, w.path]),
      [['sandbox_mismatch', '$.attributes.sandbox_name']],
    );
  });

  test('a blank attributes.sandbox_name falls back to the id', () => {
    const { doc } = accept({ id: ID, attributes: { sandbox_name: ' ', last_modification_date: 5 } });
    assert.equal(doc.sandbox_name, SANDBOX);
  });

  test('a sandbox name made only of a dash and digits is kept whole', () => {
    assert.equal(accept({ id: `${SHA}_-123`, attributes: { last_modification_date: 1 } }).doc.sandbox_name, '-123');
  });
});

describe('envelope', () => {
  test('{data: {...}} is unwrapped; links and unknown envelope keys are not kept', () => {
    const inner = record({ last_modification_date: 7 });
    const { doc, warnings } = accept({ data: inner });
    assert.deepEqual(doc, accept(inner).doc);
    assert.deepEqual(warnings, []);
    const extra = accept({ ...inner, meta: { cursor: 'x' } });
    assert.deepEqual(
      extra.warnings.map((w) => [w.code, w.path]),
      [['dropped_field', '$.meta']],
    );
    assert.equal('meta' in extra.doc, false);
  });

  test("a wrapped line's feed-line extras beside data are kept, as inside it", () => {
    const inner = record({ last_modification_date: 7 });
    const ctx = { file_md5: 'D41D8CD98F00B204E9800998ECF8427E', pcap: 'https://x/feeds/file-behaviours/t/pcap' };
    const rel = { file: { data: { type: 'file', id: SHA } } };
    const beside = accept({ data: inner, context_attributes: ctx, relationships: rel, links: { self: 'x' }, meta: {} });
    assert.deepEqual(beside.doc, accept({ ...inner, context_attributes: ctx, relationships: rel }).doc);
    assert.deepEqual(beside.doc.context_attributes, { file_md5: 'd41d8cd98f00b204e9800998ecf8427e', pcap: ctx.pcap });
    assert.deepEqual(
      beside.warnings.map((w) => [w.code, w.path]),
      [['lowercased', '$.context_attributes.file_md5']],
    );
    // inside and beside: the record's own is kept, the other reported; other keys beside data are reported
    const both = accept({ data: { ...inner, context_attributes: { file_type_tag: 'peexe' } }, context_attributes: ctx, extra: 1 });
    assert.deepEqual(both.doc.context_attributes, { file_type_tag: 'peexe' });
    assert.deepEqual(
      both.warnings.map((w) => [w.code, w.path]),
      [
        ['dropped_field', '$.extra'],
        ['dropped_field', '$.context_attributes'],
      ],
    );
    // a malformed one beside data is reported at its own path
    const bad = accept({ data: inner, context_attributes: 'x' });
    assert.deepEqual(
      bad.warnings.map((w) => [w.code, w.path]),
      [['dropped_field', '$.context_attributes']],
    );
    assert.equal('context_attributes' in bad.doc, false);
  });

  test('the documented feed-line fields and a dropped file type are kept as text only: an object there is dropped with a warning', () => {
    const { doc, warnings } = accept(
      record(
        {
          last_modification_date: 3,
          files_dropped: [
            { path: 'a.exe', sha256: 'A'.repeat(64), type: { name: 'PE' } },
            { path: 'b', type: 'Win32 EXE' },
          ],
        },
        {
          context_attributes: { file_md5: { x: 1 }, file_type_tag: ['peexe'], pcap: 7, html_report: 'https://x/r', other: { kept: true } },
        },
      ),
    );
    assert.deepEqual(doc.context_attributes, { pcap: '7', html_report: 'https://x/r', other: { kept: true } });
    assert.deepEqual(doc.attributes.files_dropped, [
      { path: 'a.exe', sha256: 'a'.repeat(64) },
      { path: 'b', type: 'Win32 EXE' },
    ]);
    assert.deepEqual(
      warnings.map((w) => [w.code, w.path]),
      [
        ['lowercased', '$.attributes.files_dropped[0].sha256'],
        ['dropped_field', '$.attributes.files_dropped[0].type'],
        ['dropped_field', '$.context_attributes.file_md5'],
        ['dropped_field', '$.context_attributes.file_type_tag'],
        ['coerced_scalar', '$.context_attributes.pcap'],
      ],
    );
  });

  test('type may be absent', () => {
    assert.equal(accept({ id: ID, attributes: { last_modification_date: 1 } }).doc.id, ID);
  });

  test('absent attributes become {} with a warning', () => {
    const { doc, warnings } = accept({ id: ID });
    assert.deepEqual(doc.attributes, {});
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['missing_attributes', 'missing_date'],
    );
    assert.equal(doc.last_modification_date, 0);
    assert.equal(doc.analysis_date, null);
  });

  test('a leading BOM is ignored', () => {
    assert.equal(normalizeLine(`\uFEFF${JSON.stringify(record({}))}`).ok, true);
  });

  test('feed-line extras: context_attributes kept with md5/sha1 lower-cased, relationships kept as-is', () => {
    const rel = { file: { data: { type: 'file', id: SHA } } };
    const { doc, warnings } = accept(
      record(
        { last_modification_date: 3 },
        {
          context_attributes: {
            file_md5: 'D41D8CD98F00B204E9800998ECF8427E',
            file_sha1: 'DA39A3EE5E6B4B0D3255BFEF95601890AFD80709',
            file_type_tag: 'peexe',
            html_report: 'https://x/report',
            pcap: 'https://x/pcap',
            evtx: 'https://x/evtx',
            memdump: 'https://x/memdump',
          },
          relationships: rel,
        },
      ),
    );
    assert.deepEqual(doc.context_attributes, {
      file_md5: 'd41d8cd98f00b204e9800998ecf8427e',
      file_sha1: 'da39a3ee5e6b4b0d3255bfef95601890afd80709',
      file_type_tag: 'peexe',
      html_report: 'https://x/report',
      pcap: 'https://x/pcap',
      evtx: 'https://x/evtx',
      memdump: 'https://x/memdump',
    });
    assert.equal(doc.relationships, rel);
    assert.equal('context_attributes' in doc.attributes, false);
    assert.deepEqual(
      warnings.map((w) => w.path),
      ['$.context_attributes.file_md5', '$.context_attributes.file_sha1'],
    );
  });

  test('non-object extras are dropped with a warning; null extras silently', () => {
    const { doc, warnings } = accept(record({ last_modification_date: 3 }, { context_attributes: 'x', relationships: [1] }));
    assert.equal(doc.context_attributes, undefined);
    assert.equal(doc.relationships, undefined);
    assert.deepEqual(
      warnings.map((w) => [w.code, w.path]),
      [
        ['dropped_field', '$.context_attributes'],
        ['dropped_field', '$.relationships'],
      ],
    );
    const quiet = accept(record({ last_modification_date: 3 }, { context_attributes: null, relationships: null }));
    assert.deepEqual(quiet.warnings, []);
    assert.equal('context_attributes' in quiet.doc, false);
  });
});

describe('dates', () => {
  test('integers pass; numeric strings and floats are truncated with a warning', () => {
    const { doc, warnings } = accept(record({ analysis_date: '1700000000', last_modification_date: 1700000100.9 }));
    assert.equal(doc.analysis_date, 1700000000);
    assert.equal(doc.last_modification_date, 1700000100);
    assert.equal(doc.attributes.analysis_date, 1700000000);
    assert.deepEqual(
      warnings.map((w) => [w.code, w.path]),
      [
        ['coerced_scalar', '$.attributes.analysis_date'],
        ['coerced_scalar', '$.attributes.last_modification_date'],
      ],
    );
  });

  test('last_modification_date falls back to analysis_date, then 0', () => {
    const a = accept(record({ analysis_date: 1700000000 }));
    assert.equal(a.doc.last_modification_date, 1700000000);
    assert.deepEqual(
      a.warnings.map((w) => [w.code, w.path]),
      [['missing_date', '$.attributes.last_modification_date']],
    );
    assert.equal('last_modification_date' in a.doc.attributes, false, 'the fallback is not written into attributes');
    const b = accept(record({ analysis_date: 'soon', last_modification_date: null }));
    assert.equal(b.doc.analysis_date, null);
    assert.equal(b.doc.last_modification_date, 0);
    assert.deepEqual(
      b.warnings.map((w) => w.code),
      ['dropped_field', 'missing_date'],
    );
  });

  test('a date before 1970 or past year 9999 (milliseconds) is dropped, and the fallback applies', () => {
    const ms = accept(record({ analysis_date: 1700000000, last_modification_date: 1700000000123 }));
    assert.equal(ms.doc.last_modification_date, 1700000000, 'a date in milliseconds would outrank every real update');
    assert.equal('last_modification_date' in ms.doc.attributes, false);
    assert.deepEqual(
      ms.warnings.map((w) => [w.code, w.path]),
      [
        ['dropped_field', '$.attributes.last_modification_date'],
        ['missing_date', '$.attributes.last_modification_date'],
      ],
    );
    assert.match(ms.warnings[0]?.message ?? '', /Unix time in seconds, got 1700000000123: past year 9999/);
    const neg = accept(record({ analysis_date: -86400, last_modification_date: '-5' }));
    assert.equal(neg.doc.analysis_date, null);
    assert.equal(neg.doc.last_modification_date, 0);
    assert.deepEqual(
      neg.warnings.map((w) => w.code),
      ['dropped_field', 'coerced_scalar', 'dropped_field', 'missing_date'],
    );
    const edge = accept(record({ analysis_date: 0, last_modification_date: 253402300799 }));
    assert.equal(edge.doc.analysis_date, 0);
    assert.equal(edge.doc.last_modification_date, 253402300799, 'the last second of 9999 is still a date');
    assert.deepEqual(edge.warnings, []);
  });

  test('a record with neither date takes undatedAt (its batch minute) when given, else 0; analysis_date still comes first', () => {
    const r = normalizeLine(JSON.stringify(record({})), { undatedAt: 1_795_000_000 });
    assert.ok(r.ok);
    assert.equal(r.doc.last_modification_date, 1_795_000_000);
    assert.equal(r.doc.analysis_date, null);
    assert.match(r.warnings.find((w) => w.code === 'missing_date')?.message ?? '', /start of the batch's minute/);
    const a = normalizeLine(JSON.stringify(record({ analysis_date: 5 })), { undatedAt: 1_795_000_000 });
    assert.ok(a.ok);
    assert.equal(a.doc.last_modification_date, 5);
  });

  test('-0.5 truncates to 0, never -0', () => {
    assert.ok(Object.is(accept(record({ last_modification_date: -0.5 })).doc.last_modification_date, 0));
  });
});

describe('doc shape', () => {
  test('a complete small record, exactly', () => {
    const r = normalizeLine(
      JSON.stringify(
        record({ analysis_date: 10, last_modification_date: 20, sandbox_name: SANDBOX, behash: 'AB12', tags: ['DIRECT_CPU_CLOCK_ACCESS'] }),
      ),
    );
    // {type, id, attributes: {tags: [...]}}: three levels of objects and arrays
    assert.deepEqual(r, {
      ok: true,
      depth: 3,
      doc: {
        schema_version: 1,
        id: ID,
        sha256: SHA,
        sandbox_name: SANDBOX,
        analysis_date: 10,
        last_modification_date: 20,
        pivots: { behash: 'ab12', sigma_rule_ids: [], ja3: [], ja3s: [], dropped_sha256: [] },
        attributes: {
          analysis_date: 10,
          last_modification_date: 20,
          sandbox_name: SANDBOX,
          behash: 'AB12',
          tags: ['DIRECT_CPU_CLOCK_ACCESS'],
        },
      },
      warnings: [],
    });
  });
});
