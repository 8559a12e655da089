/**
 * Property-based tests: (1) never throws, always well-formed; (2) pivots agree with the
 * attributes; (3) idempotence of the canonical form.
 */
import { describe, test } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { computePivots, normalizeLine, normalizeRecord, type BehaviourDoc, type CanonicalAttributes } from '../../src/normalize/index.js';
import { junkAttributesRecordArb, recordArb } from './arbitraries.js';
import { assertWellFormed, reshape } from './helpers.js';

// Raise with FC_NUM_RUNS for a deeper soak; the default keeps the suite fast.
const RUNS = Number(process.env.FC_NUM_RUNS ?? 300);

/** Mutations of a valid record's text: truncation, insertion, deletion, or a replaced value. */
const mutatedLine = fc
  .tuple(
    recordArb,
    fc.nat(),
    fc.string({ maxLength: 3 }),
    fc.constantFrom('truncate', 'insert', 'delete', 'replace'),
    fc.jsonValue({ maxDepth: 2 }),
  )
  .map(([rec, pos, ins, op, value]) => {
    if (op === 'replace') {
      const inner = (rec.data ?? rec) as Record<string, unknown>;
      const attrs = inner.attributes as Record<string, unknown> | undefined;
      const keys = attrs === undefined ? [] : Object.keys(attrs);
      if (attrs !== undefined && keys.length > 0) attrs[keys[pos % keys.length] as string] = value;
      else inner[['id', 'type', 'attributes'][pos % 3] as string] = value;
      return JSON.stringify(rec);
    }
    const s = JSON.stringify(rec);
    const at = pos % (s.length + 1);
    if (op === 'truncate') return s.slice(0, at);
    if (op === 'insert') return s.slice(0, at) + ins + s.slice(at);
    return s.slice(0, at) + s.slice(at + 1);
  });

describe('never throws, always well-formed', () => {
  test('arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => assertWellFormed(normalizeRecord(v))),
      { numRuns: RUNS },
    );
  });

  test('arbitrary JS values (not only JSON)', () => {
    fc.assert(
      fc.property(fc.anything({ withNullPrototype: true, withMap: true, withBigInt: true, withSparseArray: true }), (v) =>
        assertWellFormed(normalizeRecord(v)),
      ),
      { numRuns: RUNS },
    );
  });

  test('arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => assertWellFormed(normalizeLine(s))),
      { numRuns: RUNS },
    );
  });

  test('mutated valid records', () => {
    fc.assert(
      fc.property(mutatedLine, (line) => assertWellFormed(normalizeLine(line))),
      { numRuns: RUNS },
    );
  });

  test('arbitrary JSON under every known attribute name is coerced to the canonical shape', () => {
    fc.assert(
      fc.property(junkAttributesRecordArb, (rec) => {
        const r = normalizeRecord(rec);
        assert.ok(r.ok);
        assertWellFormed(r);
      }),
      { numRuns: RUNS },
    );
  });

  test('valid-ish records are always accepted and canonical', () => {
    fc.assert(
      fc.property(recordArb, (rec) => {
        const r = normalizeLine(JSON.stringify(rec));
        assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.rejection));
        assertWellFormed(r);
      }),
      { numRuns: RUNS },
    );
  });
});

const unique = (xs: readonly string[]): boolean => new Set(xs).size === xs.length;
const HEX64 = /^[0-9a-f]{64}$/;

/** Pivots written from DESIGN.md §3 independently of computePivots. */
function referencePivots(a: CanonicalAttributes): BehaviourDoc['pivots'] {
  const uniq = (xs: unknown[]): string[] => [...new Set(xs.filter((x): x is string => typeof x === 'string' && x !== ''))];
  const tls = a.tls ?? [];
  const behash = typeof a.behash === 'string' ? a.behash.trim().toLowerCase() : '';
  return {
    behash: behash === '' ? null : behash,
    sigma_rule_ids: uniq((a.sigma_analysis_results ?? []).map((r) => r.rule_id?.trim())),
    ja3: uniq([...(a.ja3_digests ?? []), ...tls.map((t) => t.ja3)].map((s) => s?.trim().toLowerCase())),
    ja3s: uniq(tls.map((t) => t.ja3s?.trim().toLowerCase())),
    dropped_sha256: uniq(
      (a.files_dropped ?? []).map((f) => f.sha256?.trim().toLowerCase()).filter((h) => h !== undefined && HEX64.test(h)),
    ),
  };
}

describe('pivots agree with the attributes', () => {
  test('generated records', () => {
    fc.assert(
      fc.property(recordArb, (rec) => {
        const r = normalizeRecord(JSON.parse(JSON.stringify(rec)));
        assert.ok(r.ok);
        const { pivots, attributes: a } = r.doc;
        assert.deepEqual(pivots, computePivots(a));
        assert.deepEqual(pivots, referencePivots(a));
        for (const list of [pivots.sigma_rule_ids, pivots.ja3, pivots.ja3s, pivots.dropped_sha256]) assert.ok(unique(list));
        const tls = a.tls ?? [];
        for (const j of pivots.ja3) {
          assert.equal(j, j.toLowerCase());
          assert.ok((a.ja3_digests ?? []).some((d) => d.trim() === j) || tls.some((t) => t.ja3?.trim() === j), j);
        }
        for (const j of pivots.ja3s)
          assert.ok(
            tls.some((t) => t.ja3s?.trim() === j),
            j,
          );
        for (const h of pivots.dropped_sha256) {
          assert.match(h, HEX64);
          assert.ok(
            (a.files_dropped ?? []).some((f) => f.sha256?.trim() === h),
            h,
          );
        }
        for (const id of pivots.sigma_rule_ids) {
          assert.ok(
            (a.sigma_analysis_results ?? []).some((s) => s.rule_id?.trim() === id),
            id,
          );
        }
      }),
      { numRuns: RUNS },
    );
  });
});

describe('idempotence', () => {
  test('normalizing the reshaped doc gives the same doc and no repair warnings', () => {
    fc.assert(
      fc.property(recordArb, (rec) => {
        const first = normalizeLine(JSON.stringify(rec));
        assert.ok(first.ok);
        const second = normalizeLine(JSON.stringify(reshape(first.doc)));
        assert.ok(second.ok);
        assert.deepEqual(second.doc, first.doc);
        // Only findings about the data itself may recur; every repair was already applied.
        for (const w of second.warnings) assert.ok(w.code === 'missing_date' || w.code === 'sandbox_mismatch', `${w.code} at ${w.path}`);
      }),
      { numRuns: RUNS },
    );
  });
});
