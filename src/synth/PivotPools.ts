import { Rng } from './Rng.js';
import { vocab } from './vocab.js';

/**
 * Small shared pools of pivot values. Records draw from them (skewed toward the head) so that a
 * hunter's pivot on a behash, JA3, JA3S, sigma rule id, dropped file, C2 host or IP returns several
 * behaviour ids, the way it does on the real feed.
 */
export interface PivotPools {
  behash: readonly string[];
  ja3: readonly string[];
  ja3s: readonly string[];
  sigmaRuleIds: readonly string[];
  droppedSha256: readonly string[];
  c2Domains: readonly string[];
  c2Ips: readonly string[];
}

/** Pool sizes; small enough that values repeat within a few hundred records. */
export interface PivotPoolSizes {
  behash: number;
  ja3: number;
  ja3s: number;
  sigmaRuleIds: number;
  droppedSha256: number;
  c2Domains: number;
  c2Ips: number;
}

const DEFAULT_SIZES: PivotPoolSizes = {
  behash: 40,
  ja3: 24,
  ja3s: 16,
  sigmaRuleIds: 48,
  droppedSha256: 80,
  c2Domains: 60,
  c2Ips: 60,
};

/** Builds the pools from their own seed so the pools don't depend on how many records came before. */
export function createPivotPools(seed: number | string, sizes: Partial<PivotPoolSizes> = {}): PivotPools {
  const n = { ...DEFAULT_SIZES, ...sizes };
  const rng = new Rng(`pools:${String(seed)}`);
  const many = (count: number, make: () => string): string[] => Array.from({ length: count }, make);
  return {
    behash: many(n.behash, () => rng.hex(32)),
    ja3: many(n.ja3, () => rng.hex(32)),
    ja3s: many(n.ja3s, () => rng.hex(32)),
    sigmaRuleIds: many(n.sigmaRuleIds, () => rng.hex(64)),
    droppedSha256: many(n.droppedSha256, () => rng.hex(64)),
    c2Domains: many(
      n.c2Domains,
      () =>
        `${rng.pick(vocab.domainWords)}${rng.pick(vocab.domainWords)}${rng.chars(rng.range(0, 4), 'abcdefghijklmnopqrstuvwxyz0123456789')}.${rng.pick(vocab.tlds)}`,
    ),
    c2Ips: many(n.c2Ips, () => publicIp(rng)),
  };
}

/** A routable-looking IPv4 address (skips 0/8, 10/8, 127/8 and the multicast range). */
export function publicIp(rng: Rng): string {
  let a = rng.range(1, 223);
  if (a === 10 || a === 127) a += 3;
  return `${a}.${rng.int(256)}.${rng.int(256)}.${rng.range(1, 254)}`;
}
