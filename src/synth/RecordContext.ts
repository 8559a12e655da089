import type { PivotPools } from './PivotPools.js';
import type { Rng } from './Rng.js';
import type { VariantName, VariantRates } from './VariantRates.js';

/**
 * Everything the attribute builders of one record share: the random stream, the variant rates,
 * the pivot pools, the size scale and a little story (user, sample path, hosts contacted) so that
 * the lists of one report refer to each other the way a real report's do.
 */
export interface RecordContext {
  rng: Rng;
  rates: VariantRates;
  pools: PivotPools;
  /** 1 for ordinary records; tens for the big Zenbox-like ones (multiplies list lengths). */
  scale: number;
  /** Windows user name the sample ran as. */
  user: string;
  /** Base name of the sample, e.g. `invoice_3h7k.exe`. */
  sampleName: string;
  /** Full path the sample ran from. */
  samplePath: string;
  /** Hosts this sample talks to (filled by the network builder, reused by IDS and sigma). */
  hosts: string[];
  /** IPs this sample talks to. */
  ips: string[];
  /** Variants this record shows; the caller turns them into tally counts. */
  marks: Set<VariantName>;
}

/**
 * Length of a list attribute: small and skewed for ordinary records (many lists empty or short),
 * proportional to the scale for big ones so their size is predictable.
 */
export function listLength(ctx: RecordContext, base: number): number {
  const { rng, scale } = ctx;
  if (scale <= 1) return rng.skewedInt(0, base);
  return Math.round(base * scale * (0.5 + rng.next()));
}

/** `hex` in upper case at the configured rate, recording the variant under `mark`. */
export function maybeUpper(ctx: RecordContext, hex: string, mark: VariantName): string {
  if (!ctx.rng.chance(ctx.rates.upperCaseHash)) return hex;
  ctx.marks.add(mark);
  return hex.toUpperCase();
}
