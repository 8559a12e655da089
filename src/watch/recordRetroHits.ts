import type { Logger } from '../log/index.js';
import type { Store, Watch, WatchCondition } from '../store/index.js';
import { eachLimited } from './eachLimited.js';
import { HitRecorder } from './HitRecorder.js';
import type { WebhookOptions } from './postWebhook.js';
import type { WatchMatch } from './WatchMatcher.js';
import { WatchNotifier } from './WatchNotifier.js';

export interface RetroResult {
  /** Stored behaviours matching at least one condition. */
  behaviours: number;
  /** Hits that were new (recorded and notified now). */
  hits: number;
  /** Notifications of those hits that could not be delivered (dead-lettered, stage watch). */
  undelivered: number;
  /** Stopped by `signal` before every matching behaviour was looked at (a second run resumes). */
  interrupted: boolean;
}

/** Documents read at once: bounds memory whatever a condition matches. */
const PAGE = 200;

/**
 * `watch add --retro`: what the store already holds, as hits. Each condition's stored behaviours
 * (Sink.query) are read back for their sha256, sandbox and version, then recorded and notified
 * exactly like live hits, so a behaviour a live worker reports at the same time is notified
 * once, and a second `--retro` adds nothing. Once `signal` aborts, the hits under way finish
 * (recorded and notified) and no other starts, so a second run picks up exactly the rest.
 */
export async function recordRetroHits(
  store: Pick<Store, 'sink' | 'watches' | 'dlq'>,
  watch: Watch,
  log: Logger,
  o: { webhook?: WebhookOptions; concurrency?: number; signal?: AbortSignal } = {},
): Promise<RetroResult> {
  const stopped = (): boolean => o.signal?.aborted === true;
  const byId = new Map<string, Set<WatchCondition>>();
  for (const c of watch.conditions) {
    for (const id of await store.sink.query(c.kind, c.value)) {
      const set = byId.get(id) ?? new Set<WatchCondition>();
      set.add(c);
      byId.set(id, set);
    }
  }
  const notifier = new WatchNotifier(store.dlq, log.child({ stage: 'watch' }), o.webhook);
  const recorder = new HitRecorder(store.watches, notifier, o.concurrency);
  const ids = [...byId.keys()].sort();
  let hits = 0;
  for (let k = 0; k < ids.length && !stopped(); k += PAGE) {
    const matches: WatchMatch[] = [];
    await eachLimited(ids.slice(k, k + PAGE), 8, async (id) => {
      const doc = await store.sink.get(id);
      // removed or replaced between the query and the read: nothing to report
      if (!doc) return;
      const conditions = byId.get(id) as Set<WatchCondition>;
      const { sha256, sandbox_name, last_modification_date, pivots } = doc;
      matches.push({
        watch,
        doc: { id, sha256, sandbox_name, last_modification_date, pivots },
        matched: watch.conditions.filter((c) => conditions.has(c)),
      });
    });
    // in id order, like the query: a retro run's hits are listed deterministically
    matches.sort((a, b) => (a.doc.id < b.doc.id ? -1 : a.doc.id > b.doc.id ? 1 : 0));
    hits += (await recorder.record(matches, Date.now, stopped)).length;
  }
  return { behaviours: byId.size, hits, undelivered: notifier.undelivered, interrupted: stopped() };
}
