/**
 * Generators of hostile feed lines for the fuzz suite (fuzz.test.ts). fast-check only draws
 * small *specs* (lengths, styles, seeds); the JSON text is then built iteratively from a spec
 * with a tiny seeded PRNG, so a 5,000-level structure costs no recursion (neither to generate
 * nor to shrink) and its nesting depth is known from how it was built, independently of the
 * normalizer's own depth scanner.
 */
import fc from 'fast-check';
import { recordArb } from './arbitraries.js';

type Arb<T = unknown> = fc.Arbitrary<T>;

/** JSON text plus the container nesting it was built with (0 for a scalar). */
export interface Built {
  text: string;
  depth: number;
}

/**
 * A generated feed line. `depth` is the expected nesting of the text (null when the text was
 * deliberately damaged and has no meaningful depth); `valid` marks a well-formed
 * file_behaviour record, which must be accepted whenever it is within the depth limit.
 */
export interface FuzzLine {
  text: string;
  depth: number | null;
  valid: boolean;
}

// ---------------------------------------------------------------------------------------------
// Deterministic PRNG and the pools it draws from

/** mulberry32: small, fast, good enough to pick from pools. */
export function prng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n: number): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % n) >>> 0;
  };
}
type Rand = ReturnType<typeof prng>;

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[r(xs.length)] as T;

/** Number literals as they appear in feed text: huge, tiny, overflowing (→ ±Infinity), -0. */
export const NUMBER_LITERALS: readonly string[] = [
  '0',
  '-0',
  '-0.0',
  '0e5',
  '1',
  '-1',
  '65535',
  '2e9',
  '4294967296',
  '9007199254740993',
  '123456789012345678901234567890',
  '1e308',
  '-1.7976931348623157e308',
  '1E+2',
  '0.1',
  '5e-324',
  '1e-400',
  '1e999',
  '-1e999',
];

/** Characters strings are made of: JSON-significant ones, NUL and controls, lone surrogates. */
const CHARS: readonly string[] = [
  'a',
  'Z',
  '0',
  ' ',
  '"',
  '\\',
  '/',
  '[',
  ']',
  '{',
  '}',
  ':',
  ',',
  '\u0000',
  '\u001f',
  '\n',
  '\t',
  '\u007f',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ufeff',
  '\u2028',
  '\u2029',
  '\uffff',
  'é',
  '\ud83d\ude00',
  '\\"',
  '\\\\',
];

/** Keys that hurt: prototype names, envelope and node field names, odd and numeric keys. */
export const NASTY_KEYS: readonly string[] = [
  '__proto__',
  'constructor',
  'prototype',
  'polluted',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'toJSON',
  'children',
  'name',
  'process_id',
  'id',
  'type',
  'attributes',
  'data',
  'processes_tree',
  'tags',
  '',
  '0',
  '4294967295',
  '\u0000',
  '\ud800',
  'k"q',
  'b\\',
  '[{',
];

function randomString(r: Rand, maxLen: number): string {
  let s = '';
  const n = r(maxLen + 1);
  for (let i = 0; i < n; i++) s += pick(r, CHARS);
  return s;
}

/**
 * String literal. Half the time through JSON.stringify (lone surrogates escaped as `\udXXX`),
 * otherwise with only `"`, `\` and control characters escaped, so lone surrogates, U+2028 and
 * BOMs reach the parser raw.
 */
export function stringLiteral(s: string, raw: boolean): string {
  if (!raw) return JSON.stringify(s);
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += '\\\\';
    else if (c < 0x20) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += s[i];
  }
  return `${out}"`;
}

const randomKey = (r: Rand): string => (r(3) === 0 ? randomString(r, 6) : pick(r, NASTY_KEYS));
const keyLiteral = (r: Rand, k: string): string => stringLiteral(k, r(2) === 0);

/** A scalar literal (depth 0). */
function scalar(r: Rand): string {
  switch (r(6)) {
    case 0:
    case 1:
      return pick(r, NUMBER_LITERALS);
    case 2:
      return pick(r, ['true', 'false', 'null']);
    default:
      return stringLiteral(randomString(r, 12), r(2) === 0);
  }
}

/** Values that try to pollute prototypes if anything merges them naively (depth 3). */
const POLLUTION =
  '{"__proto__":{"polluted":"yes","isAdmin":true},"constructor":{"prototype":{"polluted":"yes"}},"prototype":{"polluted":"yes"}}';

/** A small sibling value put next to the spine at some level. */
function decoration(r: Rand): Built {
  switch (r(8)) {
    case 0:
      return { text: pick(r, ['[]', '{}']), depth: 1 };
    case 1:
      return { text: POLLUTION, depth: 3 };
    case 2:
      return { text: '[[[]]]', depth: 3 };
    case 3:
      return { text: `[${scalar(r)},${scalar(r)}]`, depth: 1 };
    case 4:
      return { text: `{"__proto__":${scalar(r)},"a":${scalar(r)}}`, depth: 1 };
    default:
      return { text: scalar(r), depth: 0 };
  }
}

/**
 * `"k":v` members with distinct keys (none in `taken`), their values scalars and small
 * containers. Depth is the deepest value (0 when all are scalars).
 */
export function members(r: Rand, n: number, prefix: string, taken: ReadonlySet<string> = new Set()): Built {
  const used = new Set(taken);
  const parts: string[] = [];
  let depth = 0;
  for (let i = 0; i < n; i++) {
    let k = r(16) === 0 ? pick(r, NASTY_KEYS) : `${prefix}${i}`;
    if (used.has(k)) k = `${prefix}${i}`;
    if (used.has(k)) continue;
    used.add(k);
    const v = r(10) === 0 ? decoration(r) : { text: scalar(r), depth: 0 };
    depth = Math.max(depth, v.depth);
    parts.push(`${keyLiteral(r, k)}:${v.text}`);
  }
  return { text: parts.join(','), depth };
}

/** Items of a long array: scalars, with now and then an object or a small container. */
function items(r: Rand, n: number): Built {
  const parts: string[] = [];
  let depth = 0;
  for (let i = 0; i < n; i++) {
    const v = r(8) === 0 ? decoration(r) : { text: scalar(r), depth: 0 };
    depth = Math.max(depth, v.depth);
    parts.push(v.text);
  }
  return { text: parts.join(','), depth };
}

// ---------------------------------------------------------------------------------------------
// Blocks: a spine of nested containers ending in a leaf, with siblings at random levels

export type SpineStyle = 'array' | 'object' | 'proc' | 'mixed';
export type LeafKind = 'scalar' | 'empty' | 'wideObject' | 'longArray' | 'pollution';

export interface BlockSpec {
  /** Spine levels; a `proc` step is two levels (node object + its `children` list). */
  length: number;
  style: SpineStyle;
  /** Percentage of steps that get sibling values. */
  decorate: number;
  leaf: LeafKind;
  /** Keys/items of a wide leaf. */
  width: number;
  seed: number;
}

/** Builds the text of a block iteratively, tracking its depth level by level. */
export function buildBlock(spec: BlockSpec): Built {
  const r = prng(spec.seed);
  const open: string[] = [];
  const close: string[] = [];
  let level = 0;
  let max = 0;
  const decorated = (): boolean => r(100) < spec.decorate;
  /** Siblings in an array at `at`: `before` goes in front of the spine child, `after` behind it. */
  const arraySiblings = (at: number): [string, string] => {
    let before = '';
    let after = '';
    if (decorated()) {
      const d = decoration(r);
      max = Math.max(max, at + d.depth);
      before = `${d.text},`;
    }
    if (decorated()) {
      const d = decoration(r);
      max = Math.max(max, at + d.depth);
      after = `,${d.text}`;
    }
    return [before, after];
  };
  /** Sibling members in an object at `at`, with keys other than `taken`. */
  const objectSiblings = (at: number, taken: ReadonlySet<string>): [string, string] => {
    let before = '';
    let after = '';
    if (decorated()) {
      const m = members(r, 1 + r(3), 's', taken);
      if (m.text !== '') {
        max = Math.max(max, at + m.depth);
        before = `${m.text},`;
      }
    }
    if (decorated()) {
      const m = members(r, 1 + r(3), 't', taken);
      if (m.text !== '') {
        max = Math.max(max, at + m.depth);
        after = `,${m.text}`;
      }
    }
    return [before, after];
  };

  // `length` counts levels: a proc step adds two, so the spine may end one level past it
  while (level < spec.length) {
    const step = spec.style === 'mixed' ? pick(r, ['array', 'object', 'proc'] as const) : spec.style;
    if (step === 'array') {
      level += 1;
      max = Math.max(max, level);
      const [b, a] = arraySiblings(level);
      open.push(`[${b}`);
      close.push(`${a}]`);
    } else if (step === 'object') {
      level += 1;
      max = Math.max(max, level);
      const key = randomKey(r);
      const [b, a] = objectSiblings(level, new Set([key]));
      open.push(`{${b}${keyLiteral(r, key)}:`);
      close.push(`${a}}`);
    } else {
      // process node `{"name":..,"process_id":..,..,"children":[..,CHILD,..]}`
      level += 1;
      const nodeLevel = level;
      const [nb, na] = objectSiblings(nodeLevel, new Set(['name', 'process_id', 'children']));
      const name = stringLiteral(randomString(r, 8), r(2) === 0);
      const pid = r(2) === 0 ? String(r(65536)) : JSON.stringify(String(r(65536)));
      level += 1;
      max = Math.max(max, level);
      const [cb, ca] = arraySiblings(level);
      open.push(`{"name":${name},"process_id":${pid},${nb}"children":[${cb}`);
      close.push(`${ca}]${na}}`);
    }
  }

  let leaf: Built;
  switch (spec.leaf) {
    case 'scalar':
      leaf = { text: scalar(r), depth: 0 };
      break;
    case 'empty':
      leaf = { text: pick(r, ['[]', '{}']), depth: 1 };
      break;
    case 'pollution':
      leaf = { text: POLLUTION, depth: 3 };
      break;
    case 'wideObject': {
      const m = members(r, spec.width, 'k');
      leaf = { text: `{${m.text}}`, depth: 1 + m.depth };
      break;
    }
    case 'longArray': {
      const it = items(r, spec.width);
      leaf = { text: `[${it.text}]`, depth: 1 + it.depth };
      break;
    }
  }
  max = Math.max(max, level + leaf.depth);
  return { text: open.join('') + leaf.text + close.reverse().join(''), depth: max };
}

/** Spine length: mostly shallow, often past any sane limit, up to ~5,000 levels. */
const spineLength = (max: number): Arb<number> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: Math.min(60, max) }) },
    { weight: 3, arbitrary: fc.integer({ min: 1, max: Math.min(1_200, max) }) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max }) },
  );

/** Width of a wide leaf: mostly small, sometimes thousands. */
const width = (max: number): Arb<number> =>
  fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 20 }) }, fc.integer({ min: 0, max }));

export const blockSpecArb = (maxLength = 5_000, maxWidth = 4_000): Arb<BlockSpec> =>
  fc.record({
    length: spineLength(maxLength),
    style: fc.constantFrom<SpineStyle>('array', 'object', 'proc', 'mixed'),
    decorate: fc.constantFrom(0, 5, 30, 100),
    leaf: fc.constantFrom<LeafKind>('scalar', 'empty', 'wideObject', 'longArray', 'pollution'),
    width: width(maxWidth),
    seed: fc.integer(),
  });

// ---------------------------------------------------------------------------------------------
// Records: a valid file_behaviour record (from arbitraries.ts) with blocks spliced in

export type Target = 'attrUnknown' | 'attrKnown' | 'procTree' | 'procNodeKey' | 'relationships' | 'context' | 'topLevel';

const KNOWN_TARGETS: readonly string[] = [
  'tags',
  'files_dropped',
  'processes_tree',
  'analysis_date',
  'last_modification_date',
  'verdict_confidence',
  'behash',
  'sandbox_name',
  'has_pcap',
  'ja3_digests',
  'ids_results',
  'ids_alerts',
  'sigma_analysis_results',
  'signature_matches',
  'tls',
  'http_conversations',
  'registry_keys_set',
  'content_model_sets',
];
/** Top-level keys whose value decides whether the record is valid: never overwritten. */
const IDENTITY_KEYS: ReadonlySet<string> = new Set(['id', 'type', 'attributes', 'data']);

export interface Insert {
  target: Target;
  key: string;
  known: string;
  block: BlockSpec;
}

export interface RecordSpec {
  base: Record<string, unknown>;
  inserts: Insert[];
  /** Extra unknown attributes / top-level fields (thousands of keys on the record itself). */
  wideAttributes: number;
  wideTop: number;
  seed: number;
  bom: boolean;
  /** Put inside the id's sandbox name: lone surrogates are fine there, NUL makes the id bad. */
  idNoise: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Own data property even for `__proto__` (a plain assignment would set the prototype). */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function ensureObj(parent: Record<string, unknown>, k: string): Record<string, unknown> {
  const v = Object.hasOwn(parent, k) ? parent[k] : undefined;
  if (isObj(v)) return v;
  const o: Record<string, unknown> = {};
  setOwn(parent, k, o);
  return o;
}

/**
 * Depth of a small JS value (treating marker strings as scalars) and the number of containers
 * around each marker. Recursive: only used on the base record, which is a few levels deep.
 */
function scan(v: unknown, level: number, markers: Map<string, number>): number {
  if (typeof v === 'string' && v.startsWith('@@fz')) markers.set(v, level);
  if (typeof v !== 'object' || v === null) return 0;
  const children = Array.isArray(v) ? v : Object.keys(v).map((k) => (v as Record<string, unknown>)[k]);
  let d = 0;
  for (const c of children) d = Math.max(d, scan(c, level + 1, markers));
  return 1 + d;
}

/** Splices the text of `by` over the one occurrence of `what`; false when not exactly one. */
function spliceOnce(text: string, what: string, by: string): string | undefined {
  const at = text.indexOf(what);
  if (at < 0 || text.indexOf(what, at + 1) >= 0) return undefined;
  return text.slice(0, at) + by + text.slice(at + what.length);
}

/** Builds the line of a record spec (undefined in the rare case a marker is ambiguous). */
export function buildRecord(spec: RecordSpec): FuzzLine | undefined {
  const rec = structuredClone(spec.base);
  const inner = isObj(rec.data) && !Object.hasOwn(rec, 'id') ? rec.data : rec;
  let valid = true;
  if (spec.idNoise !== '' && typeof inner.id === 'string') {
    // after the first character of the sandbox part, so it never sits at an edge
    inner.id = `${inner.id.slice(0, 66)}${spec.idNoise}${inner.id.slice(66)}`;
    valid = !spec.idNoise.includes('\u0000');
  }
  const blocks = new Map<string, Built>();
  spec.inserts.forEach((ins, i) => {
    const marker = `@@fz${i}@@`;
    const style = ins.target === 'procTree' && ins.block.style !== 'mixed' ? 'proc' : ins.block.style;
    blocks.set(marker, buildBlock({ ...ins.block, style }));
    switch (ins.target) {
      case 'attrUnknown':
        setOwn(ensureObj(inner, 'attributes'), ins.key, marker);
        break;
      case 'attrKnown':
        setOwn(ensureObj(inner, 'attributes'), ins.known, marker);
        break;
      case 'procTree':
        setOwn(
          ensureObj(inner, 'attributes'),
          'processes_tree',
          ins.key.length % 2 === 0 ? [marker] : [{ name: 'root', children: [marker] }],
        );
        break;
      case 'procNodeKey': {
        const node: Record<string, unknown> = { name: 'root', process_id: '4' };
        if (ins.key !== 'name' && ins.key !== 'process_id' && ins.key !== 'children') setOwn(node, ins.key, marker);
        else setOwn(node, `x${ins.key}`, marker);
        node.children = [];
        setOwn(ensureObj(inner, 'attributes'), 'processes_tree', [node]);
        break;
      }
      case 'relationships':
        setOwn(ensureObj(inner, 'relationships'), ins.key, marker);
        break;
      case 'context':
        setOwn(ensureObj(inner, 'context_attributes'), ins.key, marker);
        break;
      case 'topLevel':
        setOwn(inner, IDENTITY_KEYS.has(ins.key) ? `x_${ins.key}` : ins.key, marker);
        break;
    }
  });
  const r = prng(spec.seed);
  const wide: Array<[string, Record<string, unknown>, number]> = [];
  if (spec.wideAttributes > 0) wide.push(['@@fzWA@@', ensureObj(inner, 'attributes'), spec.wideAttributes]);
  if (spec.wideTop > 0) wide.push(['@@fzWT@@', inner, spec.wideTop]);
  const wideMembers = new Map<string, Built>();
  for (const [marker, obj, n] of wide) {
    // built before the marker goes in, so the member keys avoid every existing key
    const m = members(r, n, marker === '@@fzWA@@' ? 'u' : 'f', new Set([...Object.keys(obj), ...IDENTITY_KEYS, 'links']));
    if (m.text === '') continue;
    wideMembers.set(marker, m);
    setOwn(obj, marker, marker);
  }

  const markerLevels = new Map<string, number>();
  let depth = scan(rec, 0, markerLevels);
  let text = JSON.stringify(rec);
  for (const [marker, b] of blocks) {
    const level = markerLevels.get(marker);
    if (level === undefined) continue; // overwritten by a later insert
    const spliced = spliceOnce(text, JSON.stringify(marker), b.text);
    if (spliced === undefined) return undefined;
    text = spliced;
    depth = Math.max(depth, level + b.depth);
  }
  for (const [marker, m] of wideMembers) {
    const level = markerLevels.get(marker) as number;
    const q = JSON.stringify(marker);
    const spliced = spliceOnce(text, `${q}:${q}`, m.text);
    if (spliced === undefined) return undefined;
    text = spliced;
    depth = Math.max(depth, level + m.depth);
  }
  return { text: spec.bom ? `\ufeff${text}` : text, depth, valid };
}

const targetArb = fc.constantFrom<Target>('attrUnknown', 'attrKnown', 'procTree', 'procNodeKey', 'relationships', 'context', 'topLevel');
const keyArb = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...NASTY_KEYS) }, fc.string({ maxLength: 8 }));

export const recordSpecArb = (maxLength = 5_000, maxWidth = 4_000): Arb<RecordSpec> =>
  fc.record({
    base: recordArb,
    inserts: fc.array(
      fc.record({ target: targetArb, key: keyArb, known: fc.constantFrom(...KNOWN_TARGETS), block: blockSpecArb(maxLength, maxWidth) }),
      { maxLength: 3 },
    ),
    wideAttributes: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: maxWidth })),
    wideTop: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: Math.min(maxWidth, 1_000) })),
    seed: fc.integer(),
    bom: fc.boolean(),
    idNoise: fc.oneof({ weight: 8, arbitrary: fc.constant('') }, fc.constantFrom('\ud800', '\udc00', '\u2028', '\ud83d\ude00', 'a\u0000')),
  });

/** Valid records with deep/wide junk spliced in. */
export const recordLineArb = (maxLength = 5_000, maxWidth = 4_000): Arb<FuzzLine> =>
  recordSpecArb(maxLength, maxWidth)
    .map(buildRecord)
    .filter((l): l is FuzzLine => l !== undefined);

/** A bare block as the whole line, or wrapped as `{"data": block}`. */
export const bareLineArb: Arb<FuzzLine> = fc.tuple(blockSpecArb(), fc.boolean()).map(([spec, wrap]) => {
  const b = buildBlock(spec);
  return wrap ? { text: `{"data":${b.text}}`, depth: 1 + b.depth, valid: false } : { ...b, valid: false };
});

/** A line damaged after building: truncated, or a raw NUL / bracket / quote inserted. */
export const damagedLineArb: Arb<FuzzLine> = fc
  .tuple(fc.oneof(recordLineArb(1_200, 500), bareLineArb), fc.nat(), fc.constantFrom('', '\u0000', '[', '{', ']', '"', '\\', '\ud800'))
  .map(([line, pos, ins]) => {
    const at = pos % (line.text.length + 1);
    return { text: line.text.slice(0, at) + ins + (ins === '' ? '' : line.text.slice(at)), depth: null, valid: false };
  });

/** Every kind of line, weighted towards records. */
export const fuzzLineArb: Arb<FuzzLine> = fc.oneof(
  { weight: 6, arbitrary: recordLineArb() },
  { weight: 2, arbitrary: bareLineArb },
  { weight: 1, arbitrary: damagedLineArb },
);
