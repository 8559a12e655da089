import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { addMinutes, type MinuteId } from '../../src/minute/index.js';
import { writeFeed } from '../../src/synth/index.js';

/** A feed directory of single-minute feeds, and the ids each minute holds (to check "ok only if stored"). */
export interface MinuteFeeds {
  dir: string;
  ids: Map<MinuteId, string[]>;
  /** Every id, sorted. */
  all: string[];
}

/**
 * `minutes` single-minute feeds from `start` (no updates, no malformed lines) in one directory
 * under `dir`, each minute of its own seed, so that which ids a minute holds is known.
 */
export async function minuteFeeds(dir: string, start: MinuteId, minutes: number, perMinute: number, seed: number): Promise<MinuteFeeds> {
  const out = join(dir, `feed-${start}`);
  mkdirSync(out, { recursive: true });
  const ids = new Map<MinuteId, string[]>();
  for (let i = 0; i < minutes; i++) {
    const minute = addMinutes(start, i);
    const m = await writeFeed({
      out: join(dir, `one-${minute}`),
      seed: seed * 1000 + i,
      start: minute,
      minutes: 1,
      perMinute,
      malformedRate: 0,
      bigRate: 0,
      variants: { update: 0 },
    });
    for (const f of m.files) copyFileSync(join(dir, `one-${minute}`, f.file), join(out, f.file));
    ids.set(minute, m.expectedIds);
  }
  return { dir: out, ids, all: [...ids.values()].flat().sort() };
}

/** Polls `check` until it holds; throws naming `what` after `ms`. */
export async function until(check: () => Promise<boolean>, what: string, ms = 60_000, everyMs = 250): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${ms} ms`);
    await sleep(everyMs);
  }
}
