import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from 'vitest';
import { VARIANT_NAMES, writeFeed, type FeedManifest, type VariantName } from '../../src/synth/index.js';
import { batchLines, classify, detectVariants, tempDir, timeOffsetRuleHolds } from './helpers.js';

// A moderately sized feed with the default rates: every documented variant must show up in it.
const tmp = tempDir('synth-variants-');
afterAll(tmp.cleanup);
let manifest: FeedManifest;
const found = Object.fromEntries(VARIANT_NAMES.map((n) => [n, 0])) as Record<VariantName, number>;
const records: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  manifest = await writeFeed({ out: tmp.dir, seed: 2026, minutes: 10, perMinute: 100, compression: 'none' });
  for (const f of manifest.files) {
    for (const line of batchLines(join(tmp.dir, f.file))) {
      const v = classify(line);
      if (!v.ok) continue;
      records.push(v.record);
      for (const name of detectVariants(v.record, Buffer.byteLength(line))) found[name] += 1;
    }
  }
  found.update = manifest.updates.length;
});

test('every variant appears, with the default rates', () => {
  const absent = VARIANT_NAMES.filter((n) => found[n] === 0);
  assert.deepEqual(absent, [], `variants never seen: ${absent.join(', ')}`);
});

test('what the data shows agrees exactly with the manifest tally', () => {
  assert.deepEqual(found, manifest.variants);
});

test('time_offset appears only on child process nodes', () => {
  for (const r of records) assert.ok(timeOffsetRuleHolds((r.attributes as Record<string, unknown>).processes_tree), String(r.id));
});

test('ids_results entries lack rule_category; ids_alerts entries carry it', () => {
  for (const r of records) {
    const a = r.attributes as Record<string, Array<Record<string, unknown>> | undefined>;
    for (const e of a.ids_results ?? []) assert.ok(!('rule_category' in e));
    for (const e of a.ids_alerts ?? []) assert.equal(typeof e.rule_category, 'string');
  }
});

test('sigma match_context comes as a list of {values} and as a {values: [...]} dict', () => {
  let list = 0;
  let dict = 0;
  for (const r of records) {
    for (const s of ((r.attributes as Record<string, unknown>).sigma_analysis_results as Array<{
      match_context: unknown;
      rule_id: string;
    }>) ?? []) {
      assert.match(s.rule_id, /^[0-9a-f]{64}$/);
      if (Array.isArray(s.match_context)) {
        list++;
        for (const item of s.match_context) assert.equal(typeof (item as { values: unknown }).values, 'object');
      } else {
        dict++;
        assert.ok(Array.isArray((s.match_context as { values: unknown }).values));
      }
    }
  }
  assert.ok(list > 0 && dict > 0);
});

test('malformed lines of every kind and the planted ids are not in expectedIds', () => {
  const kinds = new Set(manifest.files.flatMap((f) => f.malformed.map((m) => m.kind)));
  assert.equal(kinds.size, 7);
  assert.equal(new Set(manifest.expectedIds).size, manifest.expectedIds.length);
  for (const id of manifest.expectedIds) assert.match(id, /^[0-9a-f]{64}_.+$/);
});
