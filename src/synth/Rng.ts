/**
 * A small, fast, seeded pseudo-random generator (sfc32, seeded through splitmix32).
 *
 * The synthetic feed must be byte-identical for a given seed on every machine and Node
 * version, so nothing in `src/synth/` may touch `Math.random`; every draw goes through here.
 */

const HEX = '0123456789abcdef';
/** Two hex chars per byte value, so a 32-bit draw becomes 8 hex chars with 4 lookups. */
const BYTE_HEX: string[] = Array.from({ length: 256 }, (_, i) => HEX[i >> 4]! + HEX[i & 15]!);

/** Seeded PRNG with the handful of helpers the generators need. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed` is any integer (or a string, hashed); equal seeds give equal sequences. */
  constructor(seed: number | string) {
    let s = typeof seed === 'string' ? hashString(seed) : seedToU32(seed);
    // splitmix32 spreads a possibly tiny seed (0, 1, 42) over the whole 128-bit state.
    const next = (): number => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    // Discard the first outputs: sfc32 mixes poorly right after seeding.
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** Next unsigned 32-bit integer. */
  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi], both included. */
  range(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return p > 0 && this.next() < p;
  }

  /** Uniformly chosen element; the array must not be empty. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /**
   * Element chosen with a heavy head: low indexes come up far more often. Real pivot values
   * (a popular behash, a common JA3) follow such a skew, which makes pivots return many ids.
   */
  pickSkewed<T>(items: readonly T[]): T {
    return items[this.skewedIndex(items.length)] as T;
  }

  /** Index in [0, n) drawn with the same heavy head as {@link pickSkewed}. */
  skewedIndex(n: number): number {
    const x = this.next();
    return Math.floor(x * x * x * n);
  }

  /** Integer with a long right tail between lo and hi (for list lengths and sizes). */
  skewedInt(lo: number, hi: number): number {
    const x = this.next();
    return lo + Math.floor(x * x * (hi - lo + 1));
  }

  /** `len` lower-case hex characters. */
  hex(len: number): string {
    let out = '';
    while (out.length < len) {
      const v = this.u32();
      out += BYTE_HEX[v & 255]! + BYTE_HEX[(v >>> 8) & 255]! + BYTE_HEX[(v >>> 16) & 255]! + BYTE_HEX[v >>> 24]!;
    }
    return out.length === len ? out : out.slice(0, len);
  }

  /** `len` characters drawn from `alphabet`. */
  chars(len: number, alphabet: string): string {
    let out = '';
    for (let i = 0; i < len; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }

  /** A child generator with its own stream, so optional draws don't shift the parent's sequence. */
  fork(): Rng {
    return new Rng(this.u32());
  }
}

function seedToU32(seed: number): number {
  if (!Number.isFinite(seed)) return 0;
  const n = Math.trunc(seed);
  // Fold the high part in so seeds above 2^32 stay distinct.
  return ((n % 4294967296) ^ Math.floor(n / 4294967296)) >>> 0;
}

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
