/** Lenient attribute rules: lists, objects, scalars, unknown fields, and hostile shapes. */
import { describe, test } from 'vitest';
import assert from 'node:assert/strict';
import {
  KNOWN_ATTRIBUTES,
  MAX_PROCESS_TREE_DEPTH,
  MAX_WARNINGS,
  normalizeLine,
  normalizeRecord,
  type ProcessNode,
} from '../../src/normalize/index.js';
import { ID, STRING_LISTS as SPEC_STRING_LISTS, accept, canon, record } from './helpers.js';

// ja3_digests is a string list too, but hashes are lower-cased: it has tests of its own
const STRING_LISTS = [...SPEC_STRING_LISTS].filter((name) => name !== 'ja3_digests');

describe('string-list attributes', () => {
  test('every spec list is known to the normalizer', () => {
    for (const name of STRING_LISTS) assert.ok(KNOWN_ATTRIBUTES.includes(name), name);
  });

  for (const name of STRING_LISTS) {
    test(`${name}: scalar wrapped, numbers stringified, other items dropped`, () => {
      assert.deepEqual(canon({ [name]: 'only' }), { attributes: { [name]: ['only'] }, codes: ['coerced_scalar'] });
      const mixed = canon({ [name]: ['a', 7, null, { x: 1 }, ['b'], true, ''] });
      assert.deepEqual(mixed.attributes, { [name]: ['a', '7', ''] });
      assert.deepEqual(mixed.codes, ['coerced_scalar', 'dropped_item', 'dropped_item', 'dropped_item', 'dropped_item']);
    });
  }

  test('null and absent lists are omitted, empty lists kept, clean lists shared not copied', () => {
    assert.deepEqual(canon({ files_opened: null }), { attributes: {}, codes: [] });
    assert.deepEqual(canon({ files_opened: [] }), { attributes: { files_opened: [] }, codes: [] });
    const list = ['a', 'b'];
    assert.equal(accept(record({ tags: list, last_modification_date: 1 })).doc.attributes.tags, list);
  });

  test('a list field of another type is dropped with its path', () => {
    const { warnings, doc } = accept(record({ tags: { a: 1 }, last_modification_date: 1 }));
    assert.equal(doc.attributes.tags, undefined);
    assert.deepEqual(
      warnings.map((w) => [w.code, w.path]),
      [['dropped_field', '$.attributes.tags']],
    );
  });

  test('dropped items report their index', () => {
    const { warnings } = accept(record({ files_written: ['a', null], last_modification_date: 1 }));
    assert.deepEqual(
      warnings.map((w) => w.path),
      ['$.attributes.files_written[1]'],
    );
  });
});

describe('object-list attributes', () => {
  test('a single object becomes a one-item list; non-object items dropped; unknown sub-fields kept', () => {
    assert.deepEqual(canon({ dns_lookups: { hostname: 'a.example', resolved_ips: '1.2.3.4' } }), {
      attributes: { dns_lookups: [{ hostname: 'a.example', resolved_ips: ['1.2.3.4'] }] },
      codes: ['coerced_scalar', 'coerced_scalar'],
    });
    assert.deepEqual(canon({ files_copied: [{ source: 'a', destination: 'b', mode: 1 }, 'c', null] }), {
      attributes: { files_copied: [{ source: 'a', destination: 'b', mode: 1 }] },
      codes: ['dropped_item', 'dropped_item'],
    });
  });

  test('known sub-fields are coerced to their spec types', () => {
    const { attributes, codes } = canon({
      ip_traffic: [{ destination_ip: '1.2.3.4', destination_port: '443', transport_layer_protocol: 'TCP' }],
      http_conversations: [{ url: 'http://a/', request_method: 'GET', request_headers: { 'User-Agent': 'x', 'Content-Length': 0 } }],
      mitre_attack_techniques: [
        { id: 'T1055', severity: 'IMPACT_SEVERITY_HIGH', signature_description: 'injection', refs: [{ ref: '#x' }] },
      ],
      shared_preferences_sets: [{ key: 'k', value: 3 }],
      system_property_sets: [{ key: 'ro.debuggable', value: '0' }],
      content_model_sets: [{ uri: 'content://x' }],
      tls: [{ issuer: { CN: 'ca', serialNumber: 12 }, subject: 'CN=x', version: 'TLS 1.2' }],
    });
    assert.deepEqual(attributes, {
      ip_traffic: [{ destination_ip: '1.2.3.4', destination_port: 443, transport_layer_protocol: 'TCP' }],
      http_conversations: [{ url: 'http://a/', request_method: 'GET', request_headers: { 'User-Agent': 'x', 'Content-Length': '0' } }],
      mitre_attack_techniques: [
        { id: 'T1055', severity: 'IMPACT_SEVERITY_HIGH', signature_description: 'injection', refs: [{ ref: '#x' }] },
      ],
      shared_preferences_sets: [{ key: 'k', value: '3' }],
      system_property_sets: [{ key: 'ro.debuggable', value: '0' }],
      content_model_sets: [{ uri: 'content://x' }],
      tls: [{ issuer: { CN: 'ca', serialNumber: '12' }, version: 'TLS 1.2' }],
    });
    assert.deepEqual(codes, ['coerced_scalar', 'coerced_scalar', 'coerced_scalar', 'coerced_scalar', 'dropped_field']);
  });
});

describe('scalar attributes', () => {
  test('booleans accept "true"/"false"/0/1 and drop the rest', () => {
    const { attributes, codes } = canon({ has_pcap: 'true', has_evtx: 0, has_memdump: 'FALSE', has_html_report: true });
    assert.deepEqual(attributes, { has_pcap: true, has_evtx: false, has_memdump: false, has_html_report: true });
    assert.deepEqual(codes, ['coerced_scalar', 'coerced_scalar', 'coerced_scalar']);
    assert.deepEqual(canon({ has_pcap: 'yes' }), { attributes: {}, codes: ['dropped_field'] });
    assert.deepEqual(canon({ has_pcap: 2 }), { attributes: {}, codes: ['dropped_field'] });
  });

  test('verdict_confidence is an integer', () => {
    assert.deepEqual(canon({ verdict_confidence: 99 }), { attributes: { verdict_confidence: 99 }, codes: [] });
    assert.deepEqual(canon({ verdict_confidence: '75.5' }), { attributes: { verdict_confidence: 75 }, codes: ['coerced_scalar'] });
    assert.deepEqual(canon({ verdict_confidence: '1'.repeat(100000) + 'x' }), { attributes: {}, codes: ['dropped_field'] });
  });

  test('behash and hosts_file are strings kept verbatim', () => {
    assert.deepEqual(canon({ behash: ' AbC ', hosts_file: '127.0.0.1 localhost\n' }), {
      attributes: { behash: ' AbC ', hosts_file: '127.0.0.1 localhost\n' },
      codes: [],
    });
  });
});

describe('unknown and hostile fields', () => {
  test('unknown attributes are kept verbatim (same reference)', () => {
    const mbc = [{ id: 'B0001', objective: 'x' }];
    const { doc } = accept(record({ mbc, memory_pattern_urls: ['http://x'], last_modification_date: 1 }));
    assert.equal(doc.attributes.mbc, mbc);
    assert.deepEqual(doc.attributes.memory_pattern_urls, ['http://x']);
  });

  test('__proto__ keys stay own data properties and never change prototypes', () => {
    const line = `{"id":"${ID}","attributes":{"__proto__":{"polluted":1},"constructor":"c","files_copied":[{"__proto__":{"x":1},"source":"a"}],"tls":[{"issuer":{"__proto__":5}}]}}`;
    const r = normalizeLine(line);
    assert.ok(r.ok);
    const attrs = r.doc.attributes;
    assert.equal(Object.getPrototypeOf(attrs), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(attrs, '__proto__')?.value, { polluted: 1 });
    assert.equal(attrs.constructor, 'c');
    const copied = attrs.files_copied?.[0] as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(copied), Object.prototype);
    assert.ok(Object.hasOwn(copied, '__proto__'));
    const issuer = attrs.tls?.[0]?.issuer as Record<string, unknown>;
    assert.equal(Object.getOwnPropertyDescriptor(issuer, '__proto__')?.value, '5');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    // and the doc survives a JSON round trip unchanged
    const again = normalizeLine(JSON.stringify({ id: r.doc.id, attributes: attrs }));
    assert.ok(again.ok);
    assert.deepEqual(again.doc.attributes, attrs);
  });

  test('warnings are capped per record', () => {
    const { doc, warnings } = accept(record({ files_opened: new Array(100000).fill(null), last_modification_date: 1 }));
    assert.deepEqual(doc.attributes.files_opened, []);
    assert.equal(warnings.length, MAX_WARNINGS + 1);
    const last = warnings.at(-1);
    assert.equal(last?.code, 'warnings_truncated');
    assert.match(last?.message ?? '', /^99800 further warnings/);
  });

  // how fast is the benchmark's to say (npm run bench), not a timed unit test's
  test('huge clean arrays are accepted whole', () => {
    const big = Array.from({ length: 200000 }, (_, i) => `C:\\f${i}`);
    const files = accept(record({ files_opened: big, last_modification_date: 1 })).doc.attributes.files_opened;
    assert.equal(files?.length, 200000);
    assert.equal(files?.[199999], 'C:\\f199999');
  });
});

describe('processes_tree depth', () => {
  function chain(depth: number): Record<string, unknown> {
    let node: Record<string, unknown> = { name: `p${depth}`, children: [] };
    for (let d = depth - 1; d >= 1; d--) node = { name: `p${d}`, time_offset: d, children: [node] };
    return node;
  }
  function depthOf(nodes: ProcessNode[]): number {
    let d = 0;
    for (let level = nodes; level.length > 0; level = level[0]?.children ?? []) d++;
    return d;
  }

  test(`a chain of exactly ${MAX_PROCESS_TREE_DEPTH} levels is kept whole`, () => {
    const { doc, warnings } = accept(record({ processes_tree: [chain(MAX_PROCESS_TREE_DEPTH)], last_modification_date: 1 }));
    assert.equal(depthOf(doc.attributes.processes_tree ?? []), MAX_PROCESS_TREE_DEPTH);
    assert.deepEqual(warnings, []);
  });

  test('deeper subtrees within the nesting limit are dropped with one warning', () => {
    const { doc, warnings } = accept(record({ processes_tree: [chain(MAX_PROCESS_TREE_DEPTH + 20)], last_modification_date: 1 }));
    assert.equal(depthOf(doc.attributes.processes_tree ?? []), MAX_PROCESS_TREE_DEPTH);
    assert.deepEqual(
      warnings.map((w) => w.code),
      ['depth_limit'],
    );
    assert.ok(warnings[0]?.path.startsWith('$.attributes.processes_tree[0].children[0].children[0]'));
  });

  test('adversarial depth (200k levels, as a value or a 50k-deep text line) is refused too_deep, without stack overflow', () => {
    const r1 = normalizeRecord(record({ processes_tree: [chain(200000)], last_modification_date: 1 }));
    assert.ok(!r1.ok);
    assert.equal(r1.rejection.code, 'too_deep');
    const depth = 50000;
    const line = `{"id":"${ID}","attributes":{"processes_tree":[${'{"name":"x","children":['.repeat(depth)}${']}'.repeat(depth)}]}}`;
    const r2 = normalizeLine(line);
    assert.ok(!r2.ok);
    assert.deepEqual([r2.rejection.code, r2.rejection.path], ['too_deep', '$']);
    // the limit is a setting: a lower one refuses a tree the default keeps
    const r3 = normalizeRecord(record({ processes_tree: [chain(MAX_PROCESS_TREE_DEPTH)], last_modification_date: 1 }), { maxDepth: 50 });
    assert.equal(r3.ok ? 'ok' : r3.rejection.code, 'too_deep');
  });
});
