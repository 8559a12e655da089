/**
 * Wrong credentials counted per client address: past `limit` within `windowMs` the address is
 * held off (its requests are refused without looking at what they carry) for the rest of that
 * window, so keys cannot be guessed at the speed of the network. Bounded: past `maxAddresses`
 * the address seen least recently is forgotten.
 */
export class FailedAuth {
  private readonly seen = new Map<string, { count: number; since: number }>();
  readonly limit: number;
  readonly windowMs: number;
  private readonly maxAddresses: number;
  private readonly now: () => number;

  constructor(o: { limit?: number; windowMs?: number; maxAddresses?: number; now?: () => number } = {}) {
    this.limit = o.limit ?? 10;
    this.windowMs = o.windowMs ?? 60_000;
    this.maxAddresses = o.maxAddresses ?? 10_000;
    this.now = o.now ?? Date.now;
  }

  /** Milliseconds `address` is still held off, or 0. */
  heldFor(address: string): number {
    const e = this.seen.get(address);
    if (!e) return 0;
    const left = e.since + this.windowMs - this.now();
    if (left <= 0) {
      this.seen.delete(address);
      return 0;
    }
    return e.count >= this.limit ? left : 0;
  }

  /** Counts one wrong credential from `address`; true when it is the one that puts the address on hold (said once). */
  failed(address: string): boolean {
    const now = this.now();
    let e = this.seen.get(address);
    if (!e || now - e.since >= this.windowMs) e = { count: 0, since: now };
    // re-inserted: the map's order is the order addresses were last seen in
    this.seen.delete(address);
    this.seen.set(address, e);
    if (this.seen.size > this.maxAddresses) this.seen.delete(this.seen.keys().next().value as string);
    e.count += 1;
    return e.count === this.limit;
  }
}
