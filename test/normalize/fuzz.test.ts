/**
 * Fuzz (property-based) suite for the normalizer entry points and the chunk codec, fed with
 * hostile lines: structures nested 0..~5,000 levels (arrays, objects, process trees), objects
 * with thousands of keys, long arrays, `__proto__`/`constructor`/`prototype` keys at random
 * levels, lone surrogates and NUL in strings, huge and overflowing numbers, all spliced into
 * valid file_behaviour records (see fuzzArbitraries.ts).
 *
 * Fixed seed and few runs by default so the suite stays fast; for a soak:
 *   SANDTRAIL_FUZZ_RUNS=2000 SANDTRAIL_FUZZ_SEED=random npm run fuzz
 * A failure prints `seed` and `path`; replay that one test with SANDTRAIL_FUZZ_SEED=<seed>
 * SANDTRAIL_FUZZ_PATH=<path> npx vitest run test/normalize/fuzz.test.ts -t '<test name>'
 * (the path applies to every property, so select the failing one).
 */
import { describe, test } from 'vitest';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  DEFAULT_MAX_DEPTH,
  MAX_PROCESS_TREE_DEPTH,
  REJECT_CODES,
  normalizeLine,
  normalizeRecord,
  type NormalizeResult,
  type ProcessNode,
  type RejectCode,
} from '../../src/normalize/index.js';
import { normalizeAndSerialize, type SerializedDoc } from '../../src/feed/index.js';
import { decodeChunk, encodeChunk } from '../../src/wire/index.js';
import { jsonText, metaOf, type SinkDoc } from '../../src/wire/index.js';
import { assertWellFormed } from './helpers.js';
import { NUMBER_LITERALS, fuzzLineArb, recordLineArb, type FuzzLine } from './fuzzArbitraries.js';
import { behaviourId } from './arbitraries.js';

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return n;
}

const RUNS = Math.max(1, intFromEnv('SANDTRAIL_FUZZ_RUNS', 100));
const SEED =
  process.env.SANDTRAIL_FUZZ_SEED === 'random' ? (Math.random() * 0x1_0000_0000) | 0 : intFromEnv('SANDTRAIL_FUZZ_SEED', 0x5a7d7a11);
const PATH = process.env.SANDTRAIL_FUZZ_PATH;
if (process.env.SANDTRAIL_FUZZ_SEED === 'random') console.log(`fuzz seed: ${SEED}`);

const params = (numRuns: number): fc.Parameters<unknown> => ({
  seed: SEED,
  numRuns,
  ...(PATH === undefined ? {} : { path: PATH }),
  includeErrorInReport: true,
});

/** The feed's `maxDepth` (config allows 2..990; the normalizer also takes 1), or none (→ 200). */
type MaxDepthPick = { mode: 'default' } | { mode: 'near'; delta: number } | { mode: 'any'; value: number };
const maxDepthArb: fc.Arbitrary<MaxDepthPick> = fc.oneof(
  fc.constant({ mode: 'default' as const }),
  fc.record({ mode: fc.constant('near' as const), delta: fc.integer({ min: -3, max: 3 }) }),
  fc.record({ mode: fc.constant('any' as const), value: fc.integer({ min: 1, max: 990 }) }),
);
function chooseMaxDepth(p: MaxDepthPick, depth: number | null): number | undefined {
  if (p.mode === 'default') return undefined;
  if (p.mode === 'any') return p.value;
  return Math.min(990, Math.max(1, (depth ?? DEFAULT_MAX_DEPTH) + p.delta));
}

// ---------------------------------------------------------------------------------------------
// Checks

const PROTO_KEYS = new Map<object, string>(
  [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype].map((p) => [
    p,
    Reflect.ownKeys(p).map(String).join(),
  ]),
);

/** Nothing the inputs carry (`__proto__.polluted`, `constructor.prototype.polluted`...) leaked. */
function assertNoPollution(): void {
  const probe: Record<string, unknown> = {};
  for (const k of ['polluted', 'isAdmin', 'a', 'k0', 'u0', 'f0', 's0', 't0', 'name', 'children', 'x'])
    assert.equal(probe[k], undefined, `Object.prototype.${k} polluted`);
  assert.equal(Object.getPrototypeOf(probe), Object.prototype);
  assert.equal(Object.getPrototypeOf([]), Array.prototype);
  for (const [proto, keys] of PROTO_KEYS) assert.equal(Reflect.ownKeys(proto).map(String).join(), keys, 'a prototype gained keys');
}

const codeOf = (r: NormalizeResult | SerializedDoc | { code: string }): string =>
  'ok' in r ? (r.ok ? 'ok' : r.rejection.code) : 'code' in r ? r.code : 'ok';

/** How JSON text represents a number: non-finite numbers become null, -0 becomes 0. */
const asJsonNumber = (n: number): number | null => (Number.isFinite(n) ? (n === 0 ? 0 : n) : null);

const show = (v: unknown): string => (Object.is(v, -0) ? '-0' : `${typeof v} ${String(v)}`);

/**
 * First difference between `actual` and `expected` (a path), or undefined. Iterative, so it
 * works at any depth. Checks types, prototypes, key order and values; in `json` mode numbers
 * of `expected` are compared through their JSON form (the canonical form is the JSON text).
 */
function firstDifference(actual: unknown, expected: unknown, mode: 'strict' | 'json'): string | undefined {
  const stack: Array<[unknown, unknown, string]> = [[actual, expected, '$']];
  while (stack.length > 0) {
    const [a, e, path] = stack.pop() as [unknown, unknown, string];
    if (typeof e === 'number' && mode === 'json') {
      if (!Object.is(a, asJsonNumber(e))) return `${path}: ${show(a)} !== ${show(e)}`;
      continue;
    }
    if (typeof e !== 'object' || e === null) {
      if (!Object.is(a, e)) return `${path}: ${show(a)} !== ${show(e)}`;
      continue;
    }
    if (typeof a !== 'object' || a === null) return `${path}: ${a === null ? 'null' : typeof a} is not an object`;
    if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(e)) return `${path}: different prototypes`;
    if (Array.isArray(e)) {
      const aa = a as unknown[];
      if (aa.length !== e.length) return `${path}: length ${aa.length} !== ${e.length}`;
      for (let i = 0; i < e.length; i++) stack.push([aa[i], e[i], `${path}[${i}]`]);
      continue;
    }
    const ka = Object.keys(a);
    const ke = Object.keys(e);
    const at = ke.findIndex((k, n) => ka[n] !== k);
    if (at >= 0 || ka.length !== ke.length) {
      const n = at >= 0 ? at : Math.min(ka.length, ke.length);
      return `${path}: key #${n} is ${JSON.stringify(ka[n])}, expected ${JSON.stringify(ke[n])} (${ka.length} vs ${ke.length} keys)`;
    }
    for (const k of ke) stack.push([(a as Record<string, unknown>)[k], (e as Record<string, unknown>)[k], `${path}[${JSON.stringify(k)}]`]);
  }
  return undefined;
}

function assertSame(actual: unknown, expected: unknown, mode: 'strict' | 'json', what: string): void {
  const d = firstDifference(actual, expected, mode);
  if (d !== undefined) assert.fail(`${what}: ${d}`);
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks a canonical process tree at any depth: node objects, string name/process_id, integer
 * time_offset, a `children` list everywhere, nothing below MAX_PROCESS_TREE_DEPTH. Returns the
 * tree cut to 63 levels, which helpers' `assertWellFormed` can take (its checker flags the
 * empty `children` of level-64 nodes, which the normalizer rightly emits).
 */
function checkProcessTree(nodes: unknown, level: number): unknown[] {
  assert.ok(Array.isArray(nodes), `process tree level ${level}: not a list`);
  if (level > MAX_PROCESS_TREE_DEPTH) {
    assert.equal(nodes.length, 0, `process tree level ${level}: below the depth limit`);
    return [];
  }
  return nodes.map((n: unknown) => {
    assert.ok(isObj(n), `process tree level ${level}: node not an object`);
    for (const f of ['name', 'process_id'] as const) if (n[f] !== undefined) assert.equal(typeof n[f], 'string', `node ${f}`);
    if (n.time_offset !== undefined) assert.ok(Number.isInteger(n.time_offset) && !Object.is(n.time_offset, -0), 'node time_offset');
    const children = checkProcessTree(n.children, level + 1);
    return { ...n, children: level >= MAX_PROCESS_TREE_DEPTH - 1 ? [] : children };
  });
}

/** helpers' assertWellFormed, with process trees checked here at any depth. */
function assertCanonical(r: NormalizeResult): void {
  if (!r.ok || r.doc.attributes.processes_tree === undefined) return assertWellFormed(r);
  const cut = checkProcessTree(r.doc.attributes.processes_tree, 1);
  assertWellFormed({ ...r, doc: { ...r.doc, attributes: { ...r.doc.attributes, processes_tree: cut as ProcessNode[] } } });
}

/** Every property of one line, for one maxDepth. */
function checkLine(line: FuzzLine, maxDepth: number | undefined): void {
  const limit = maxDepth ?? DEFAULT_MAX_DEPTH;
  const opts = maxDepth === undefined ? {} : { maxDepth };

  const viaLine = normalizeLine(line.text, opts);
  assertNoPollution();
  const viaFeed = normalizeAndSerialize(line.text, maxDepth);
  assertNoPollution();
  const body = line.text.charCodeAt(0) === 0xfeff ? line.text.slice(1) : line.text;
  let parsed: { value: unknown } | undefined;
  try {
    parsed = { value: JSON.parse(body) };
  } catch {
    parsed = undefined;
  }
  const viaRecord = parsed === undefined ? undefined : normalizeRecord(parsed.value, opts);
  assertNoPollution();

  // well-formed results, known codes only
  assertCanonical(viaLine);
  if (viaRecord !== undefined) assertCanonical(viaRecord);
  if ('code' in viaFeed) {
    assert.ok(REJECT_CODES.includes(viaFeed.code as RejectCode), `unknown code ${viaFeed.code}`);
    assert.ok(viaFeed.path.startsWith('$'));
    assert.equal(typeof viaFeed.message, 'string');
  }

  // the three entry points agree
  assert.equal(codeOf(viaFeed), codeOf(viaLine), 'normalizeAndSerialize and normalizeLine disagree');
  if (viaRecord !== undefined) {
    assert.equal(codeOf(viaRecord), codeOf(viaLine), 'normalizeRecord(JSON.parse) and normalizeLine disagree');
    if (viaRecord.ok && viaLine.ok) {
      assertSame(viaRecord.doc, viaLine.doc, 'strict', 'normalizeRecord doc vs normalizeLine doc');
      assert.deepEqual(viaRecord.warnings, viaLine.warnings);
    }
  } else {
    assert.ok(codeOf(viaLine) === 'not_json' || codeOf(viaLine) === 'too_deep', `unparsable text gave ${codeOf(viaLine)}`);
  }

  // depth limit, against the depth the text was built with
  if (line.depth !== null) {
    if (line.depth > limit) assert.equal(codeOf(viaLine), 'too_deep', `depth ${line.depth} > maxDepth ${limit} not refused`);
    else assert.notEqual(codeOf(viaLine), 'too_deep', `depth ${line.depth} <= maxDepth ${limit} refused`);
    if (line.valid && line.depth <= limit)
      assert.ok(viaLine.ok, `valid record refused: ${JSON.stringify(viaLine.ok ? '' : viaLine.rejection)}`);
  }

  // the JSON text is the document
  if (!('code' in viaFeed)) {
    assert.ok(viaLine.ok);
    assertSame(viaFeed.doc, viaLine.doc, 'strict', 'normalizeAndSerialize doc vs normalizeLine doc');
    assertSame(JSON.parse(viaFeed.json), viaFeed.doc, 'json', 'JSON.parse(json) vs doc');
  }
}

// ---------------------------------------------------------------------------------------------

describe('fuzz: normalizeLine / normalizeRecord / normalizeAndSerialize', () => {
  test('hostile lines: never throw, known codes, depth limit exact, entry points agree, json is the doc, no pollution', () => {
    fc.assert(
      fc.property(fuzzLineArb, maxDepthArb, (line, pick) => checkLine(line, chooseMaxDepth(pick, line.depth))),
      params(RUNS),
    );
  });

  test('depth limit boundary: each record at maxDepth - 1, maxDepth and maxDepth + 1', () => {
    fc.assert(
      fc.property(recordLineArb(1_000, 300), (line) => {
        const d = line.depth as number;
        for (const m of [d - 1, d, d + 1]) if (m >= 1 && m <= 990) checkLine(line, m);
      }),
      params(Math.max(1, Math.ceil(RUNS / 2))),
    );
  });

  // The document's canonical form is its JSON text (what chunks and stores carry). Numbers JSON
  // cannot hold, kept verbatim in pass-through fields, read back the way JSON writes them.
  test('numbers JSON cannot hold (-0, overflowing literals) are stored the way JSON writes them', () => {
    const where = fc.constantFrom(
      (id: string, n: string) => `{"id":${id},"attributes":{"x":${n}}}`,
      (id: string, n: string) => `{"id":${id},"attributes":{"processes_tree":[{"name":"a","x":${n}}]}}`,
      (id: string, n: string) => `{"id":${id},"context_attributes":{"x":${n}}}`,
      (id: string, n: string) => `{"id":${id},"relationships":{"x":[${n}]}}`,
    );
    fc.assert(
      fc.property(behaviourId, where, fc.constantFrom(...NUMBER_LITERALS), (id, line, n) => {
        const text = line(JSON.stringify(id), n);
        const r = normalizeAndSerialize(text);
        assert.ok(!('code' in r), text);
        assertSame(JSON.parse(r.json), r.doc, 'json', `JSON.parse(json) vs doc for ${text}`);
      }),
      params(Math.max(50, RUNS)),
    );
  });
});

describe('fuzz: chunk codec', () => {
  test('decodeChunk(encodeChunk(items)) gives back each accepted document, text for text', async () => {
    const chunkArb = fc.array(fc.oneof({ weight: 4, arbitrary: recordLineArb(150, 300) }, fuzzLineArb), { maxLength: 50 });
    await fc.assert(
      fc.asyncProperty(chunkArb, async (lines) => {
        const items: SinkDoc[] = [];
        for (const l of lines) {
          const r = normalizeAndSerialize(l.text);
          if (!('code' in r)) items.push({ meta: metaOf(r.doc, r.depth), json: r.json });
        }
        const { payload, rawBytes } = await encodeChunk(items);
        const back = await decodeChunk(payload, rawBytes);
        assertNoPollution();
        assert.equal(back.length, items.length);
        back.forEach((doc, i) => {
          const { json, meta } = items[i] as SinkDoc;
          assert.equal(jsonText(doc), json, `document ${i} changed in the chunk`);
          assert.deepEqual(doc.meta, JSON.parse(JSON.stringify(meta)), `document ${i} lost its meta`);
        });
      }),
      params(Math.max(1, Math.ceil(RUNS / 4))),
    );
  });
});
