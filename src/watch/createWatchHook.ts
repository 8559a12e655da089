import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';
import type { SinkDoc } from '../wire/index.js';
import { HitRecorder } from './HitRecorder.js';
import type { WebhookOptions } from './postWebhook.js';
import { WatchMatcher, type WatchMatcherOptions } from './WatchMatcher.js';
import { WatchNotifier } from './WatchNotifier.js';

export interface WatchHookOptions extends WatchMatcherOptions {
  webhook?: WebhookOptions;
  /** Hits recorded and notified at once (default 8). */
  concurrency?: number;
}

/** What the index stage calls with the documents a chunk wrote (status ok, not stale). */
export type StoredDocsHook = (docs: readonly SinkDoc[]) => Promise<void>;

/**
 * The index stage's watch hook: matches the documents a chunk just wrote against the stored
 * watches and records and notifies the new hits. Throws only when the store fails (the index
 * job is then retried, and hits already recorded are not notified again); undeliverable
 * notifications are dead-lettered instead.
 */
export function createWatchHook(store: Pick<Store, 'watches' | 'dlq'>, log: Logger, o: WatchHookOptions = {}): StoredDocsHook {
  const matcher = new WatchMatcher(store.watches, o);
  const watchLog = log.child({ stage: 'watch' });
  const recorder = new HitRecorder(store.watches, new WatchNotifier(store.dlq, watchLog, o.webhook), o.concurrency);
  return async (docs) => {
    if (docs.length === 0) return;
    const matches = await matcher.match(docs.map((d) => d.meta));
    if (matches.length === 0) return;
    const fresh = await recorder.record(matches);
    if (fresh.length > 0) watchLog.info({ hits: fresh.length, watches: [...new Set(fresh.map((h) => h.watch))] }, 'new watch hits');
  };
}
