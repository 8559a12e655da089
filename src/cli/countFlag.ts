import { SandtrailError } from '../errors/index.js';

/**
 * A count flag (`--limit`, `--offset`): digits only, from `min` to `max`, the same words on every
 * command; anything else (empty, negative, `1e3`, `0x10`) is a usage error naming the flag.
 */
export function countFlag(flag: string, raw: string | undefined, fallback: number, o: { min: number; max: number }): number {
  if (raw === undefined) return fallback;
  const n = /^\d{1,12}$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(n >= o.min && n <= o.max))
    throw new SandtrailError('USAGE', `${flag} must be a whole number from ${o.min} to ${o.max}, got "${raw}"`);
  return n;
}

/** `--lag-minutes` of `run` and `worker scheduler`: whole minutes, at most the feed's 7 days. */
export function lagMinutesFlag(raw: string | undefined, configured: number): number {
  return countFlag('--lag-minutes', raw, configured, { min: 0, max: 7 * 24 * 60 });
}
