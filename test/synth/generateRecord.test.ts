import assert from 'node:assert/strict';
import { test } from 'vitest';
import { API_BASE, Rng, canonicalId, createPivotPools, emptyTally, generateRecord, vocab } from '../../src/synth/index.js';
import { classify, detectVariants, timeOffsetRuleHolds } from './helpers.js';

const LMD = 1_793_491_200; // 2026-11-01T00:00:00Z

test('a record has the feed line shape', () => {
  const rng = new Rng(1);
  const pools = createPivotPools(1);
  for (let i = 0; i < 300; i++) {
    const r = generateRecord(rng, { pools, lastModificationDate: LMD, bigRate: 0 });
    assert.equal(r.type, 'file_behaviour');
    const v = classify(JSON.stringify(r));
    assert.ok(v.ok, `valid id: ${r.id}`);
    assert.equal(r.links.self, `${API_BASE}/file_behaviours/${encodeURIComponent(r.id)}`);
    const a = r.attributes;
    assert.equal(a.last_modification_date, LMD);
    assert.ok(typeof a.analysis_date === 'number' && a.analysis_date <= LMD);
    const base = String(a.sandbox_name);
    assert.ok(r.id.slice(65) === base || r.id.slice(65).startsWith(`${base}-`), r.id);
    assert.ok([...vocab.sandboxes, ...vocab.privateSandboxes].includes(base as never), base);
    assert.ok(timeOffsetRuleHolds(a.processes_tree), 'time_offset only (and always) on child nodes');
    const c = r.context_attributes;
    assert.match(String(c.file_md5), /^[0-9a-f]{32}$/);
    assert.match(String(c.file_sha1), /^[0-9a-f]{40}$/);
    assert.equal(typeof c.file_type_tag, 'string');
    for (const [flag, key] of [
      ['has_html_report', 'html_report'],
      ['has_pcap', 'pcap'],
      ['has_evtx', 'evtx'],
      ['has_memdump', 'memdump'],
    ] as const) {
      assert.equal(a[flag] === true, typeof c[key] === 'string', `${flag} agrees with context_attributes.${key}`);
    }
    if (typeof a.behash === 'string') assert.match(a.behash, /^[0-9a-f]{32}$/);
  }
});

test('same seed gives identical records', () => {
  const make = (): string => {
    const rng = new Rng(5);
    const pools = createPivotPools(5);
    return Array.from({ length: 100 }, () => JSON.stringify(generateRecord(rng, { pools, lastModificationDate: LMD, bigRate: 0.05 }))).join(
      '\n',
    );
  };
  assert.equal(make(), make());
});

test('size distribution: most records are a few KB, big ones several hundred KB', () => {
  const rng = new Rng(11);
  const pools = createPivotPools(11);
  const small: number[] = [];
  const big: number[] = [];
  for (let i = 0; i < 1500; i++) {
    const r = generateRecord(rng, { pools, lastModificationDate: LMD, bigRate: 0.02 });
    const n = Buffer.byteLength(JSON.stringify(r));
    (n > 100_000 ? big : small).push(n);
  }
  small.sort((x, y) => x - y);
  const under16k = small.filter((n) => n < 16_384).length;
  assert.ok(under16k / (small.length + big.length) > 0.95, `share under 16 KB ${under16k}`);
  const median = small[Math.floor(small.length / 2)]!;
  assert.ok(median > 2_000 && median < 10_000, `median ${median}`);
  assert.ok(big.length >= 10 && big.length <= 60, `big count ${big.length}`);
  for (let i = 0; i < 20; i++) {
    const n = Buffer.byteLength(JSON.stringify(generateRecord(rng, { pools, lastModificationDate: LMD, big: true })));
    assert.ok(n > 100_000 && n < 1_000_000, `big record ${n} bytes`);
  }
});

test('pivot values repeat across records', () => {
  const rng = new Rng(3);
  const pools = createPivotPools(3);
  const counts = {
    behash: new Map<string, number>(),
    ja3: new Map<string, number>(),
    sigma: new Map<string, number>(),
    dropped: new Map<string, number>(),
  };
  const bump = (m: Map<string, number>, k: unknown): void => {
    if (typeof k === 'string') m.set(k.toLowerCase(), (m.get(k.toLowerCase()) ?? 0) + 1);
  };
  for (let i = 0; i < 400; i++) {
    const a = generateRecord(rng, { pools, lastModificationDate: LMD, bigRate: 0 }).attributes;
    bump(counts.behash, a.behash);
    for (const t of (a.tls as Array<{ ja3: string }> | undefined) ?? []) bump(counts.ja3, t.ja3);
    for (const s of (a.sigma_analysis_results as Array<{ rule_id: string }> | undefined) ?? []) bump(counts.sigma, s.rule_id);
    for (const f of (a.files_dropped as Array<{ sha256: string }> | undefined) ?? []) bump(counts.dropped, f.sha256);
  }
  for (const [name, m] of Object.entries(counts)) {
    const top = Math.max(...m.values());
    assert.ok(top >= 5, `${name}: most common value seen ${top} times`);
  }
  assert.ok([...counts.sigma.keys()].every((k) => /^[0-9a-f]{64}$/.test(k)));
});

test('an update keeps the identity and the tally counts variants once per record', () => {
  const rng = new Rng(8);
  const pools = createPivotPools(8);
  const tally = emptyTally();
  const first = generateRecord(rng, { pools, lastModificationDate: LMD, tally });
  const again = generateRecord(rng, {
    pools,
    lastModificationDate: LMD + 600,
    identity: {
      sha256: first.id.slice(0, 64).toLowerCase(),
      sandboxId: first.id.slice(65),
      sandboxName: String(first.attributes.sandbox_name),
      analysisDate: Number(first.attributes.analysis_date),
    },
  });
  assert.equal(canonicalId(again.id), canonicalId(first.id));
  assert.equal(again.attributes.last_modification_date, LMD + 600);
  const seen = detectVariants(first as unknown as Record<string, unknown>, JSON.stringify(first).length);
  for (const v of seen) assert.equal(tally[v], 1, v);
});
