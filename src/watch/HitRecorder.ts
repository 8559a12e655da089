import { record } from '../metrics/index.js';
import type { WatchHit, WatchStore } from '../store/index.js';
import { eachLimited } from './eachLimited.js';
import type { WatchMatch } from './WatchMatcher.js';
import type { WatchNotifier } from './WatchNotifier.js';

/**
 * Turns matches into hits: records each (watch, behaviour, version) in the store, and only when
 * the store says it is new, counts it and notifies it. The store's answer is the one decision
 * point, so a replayed index job, two workers or a `--retro` run racing a live worker notify a
 * hit once. A crash between recording and notifying loses that notification (it is never
 * repeated): at most once, never twice.
 */
export class HitRecorder {
  constructor(
    private readonly watches: Pick<WatchStore, 'recordHit'>,
    private readonly notifier: WatchNotifier,
    /** Hits recorded and notified at once (a webhook's retries must not hold up the others). */
    private readonly concurrency = 8,
  ) {}

  /**
   * Records the matches; resolves with the hits that were new. Throws when the store fails. Once
   * `stopped()` answers true, no further match is recorded; those under way finish, notification
   * included, so a stop never leaves a hit recorded but not notified.
   */
  async record(matches: readonly WatchMatch[], now: () => number = Date.now, stopped: () => boolean = () => false): Promise<WatchHit[]> {
    const fresh: WatchHit[] = [];
    await eachLimited(matches, this.concurrency, async (m) => {
      if (stopped()) return;
      const hit: WatchHit = {
        watch: m.watch.name,
        behaviourId: m.doc.id,
        lastModified: m.doc.last_modification_date,
        sha256: m.doc.sha256,
        sandbox: m.doc.sandbox_name,
        matched: m.matched,
        at: now(),
      };
      if (!(await this.watches.recordHit(hit, m.watch.createdAt))) return;
      record({ m: 'watchHit', watch: hit.watch });
      fresh.push(hit);
      await this.notifier.notify(m.watch, hit);
    });
    return fresh;
  }
}
