/** computePivots, exactly as DESIGN.md §3 defines the pivots. */
import { describe, test } from 'vitest';
import assert from 'node:assert/strict';
import { computePivots, type CanonicalAttributes } from '../../src/normalize/index.js';
import { accept, record } from './helpers.js';

const H1 = 'a'.repeat(64);
const H2 = `${'0123456789abcdef'.repeat(4)}`;

describe('computePivots', () => {
  test('empty attributes', () => {
    assert.deepEqual(computePivots({}), { behash: null, sigma_rule_ids: [], ja3: [], ja3s: [], dropped_sha256: [] });
  });

  test('behash is trimmed and lower-cased; blank is null', () => {
    assert.equal(computePivots({ behash: '  5F2E  ' }).behash, '5f2e');
    assert.equal(computePivots({ behash: '   ' }).behash, null);
    assert.equal(computePivots({ behash: 5 } as unknown as CanonicalAttributes).behash, null);
  });

  test('sigma_rule_ids: trimmed, original case, unique, first-seen order, empty skipped', () => {
    const p = computePivots({
      sigma_analysis_results: [
        { rule_id: ' Ab1 ' },
        { rule_id: 'c2' },
        { rule_id: 'Ab1' },
        { rule_id: '' },
        { rule_title: 'no id' },
        { rule_id: 'ab1' },
      ],
    });
    assert.deepEqual(p.sigma_rule_ids, ['Ab1', 'c2', 'ab1']);
  });

  test('ja3 = ja3_digests ∪ tls[].ja3, lower-case, unique; ja3s from tls only', () => {
    const p = computePivots({
      ja3_digests: ['AA', 'bb', ''],
      tls: [{ ja3: 'aa', ja3s: 'CC' }, { ja3: 'DD', ja3s: 'cc' }, { ja3s: '' }, { sni: 'x' }],
    });
    assert.deepEqual(p.ja3, ['aa', 'bb', 'dd']);
    assert.deepEqual(p.ja3s, ['cc']);
  });

  test('ja3, ja3s and dropped files are trimmed, as behash and sigma ids are: a padded value pivots with the bare one', () => {
    const p = computePivots({
      ja3_digests: ['AA'],
      tls: [{ ja3: ' aa ', ja3s: ' CC\t' }, { ja3s: 'cc' }],
      files_dropped: [{ sha256: ` ${H1.toUpperCase()} ` }, { sha256: H1 }],
    });
    assert.deepEqual([p.ja3, p.ja3s, p.dropped_sha256], [['aa'], ['cc'], [H1]]);
  });

  test('dropped_sha256: only valid 64-hex, lower-case, unique', () => {
    const p = computePivots({
      files_dropped: [
        { sha256: H1.toUpperCase() },
        { sha256: H2 },
        { sha256: H1 },
        { sha256: 'abc' },
        { sha256: `${H1}0` },
        { sha256: `${'g'.repeat(64)}` },
        { path: 'x' },
      ],
    });
    assert.deepEqual(p.dropped_sha256, [H1, H2]);
  });

  test('hand-built junk does not throw', () => {
    const junk = { tls: 'x', files_dropped: [null, 1, [H1]], sigma_analysis_results: { rule_id: 'x' }, ja3_digests: [1, null] };
    assert.deepEqual(computePivots(junk as unknown as CanonicalAttributes), {
      behash: null,
      sigma_rule_ids: [],
      ja3: [],
      ja3s: [],
      dropped_sha256: [],
    });
  });

  test('docs carry computePivots(attributes)', () => {
    const { doc } = accept(
      record({
        last_modification_date: 1,
        behash: 'FFEE',
        ja3_digests: 'AB',
        tls: { ja3: 'CD', ja3s: 'EF' },
        files_dropped: [{ sha256: H2.toUpperCase() }],
        sigma_analysis_results: [{ rule_id: 'r' }],
      }),
    );
    assert.deepEqual(doc.pivots, { behash: 'ffee', sigma_rule_ids: ['r'], ja3: ['ab', 'cd'], ja3s: ['ef'], dropped_sha256: [H2] });
    assert.deepEqual(doc.pivots, computePivots(doc.attributes));
  });
});
