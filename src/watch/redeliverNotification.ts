import { messageOf } from '../errors/index.js';
import type { DeadLetter, WatchHit, WatchStore } from '../store/index.js';
import { appendHitLine } from './appendHitLine.js';
import type { WebhookOptions } from './postWebhook.js';
import { WebhookBreaker } from './WebhookBreaker.js';

/**
 * Sends a dead-lettered notification again (`dlq replay` of a `watch` entry), to the channel it
 * failed on, as the watch names it now: a webhook moved to a new URL gets it there. Resolves
 * null once delivered, else why not (the watch removed, the channel dropped, the send failed).
 */
export async function redeliverNotification(
  watches: Pick<WatchStore, 'get'>,
  entry: Pick<DeadLetter, 'raw' | 'path'>,
  webhook: WebhookOptions = {},
  /** Shared by a replay's entries: a webhook still down is skipped after a few failed tries, not tried 4 times for each. */
  breaker: WebhookBreaker = new WebhookBreaker(),
): Promise<string | null> {
  let hit: WatchHit;
  try {
    hit = JSON.parse(entry.raw) as WatchHit;
  } catch (err) {
    return `the notification is not JSON: ${messageOf(err)}`;
  }
  const watch = typeof hit?.watch === 'string' ? await watches.get(hit.watch) : null;
  if (!watch) return `the watch "${String(hit?.watch)}" no longer exists`;
  // a watch of the same name added after the hit is another watch: it never matched this
  if (typeof hit.at === 'number' && watch.createdAt > hit.at) return `the watch "${watch.name}" was removed and added again since this hit`;
  const channel = entry.path === 'file' ? 'file' : 'webhook';
  const target = watch.notify[channel];
  if (!target) return `the watch "${watch.name}" no longer notifies by ${channel}`;
  try {
    if (channel === 'file') await appendHitLine(target, entry.raw);
    else await breaker.send(target, entry.raw, webhook);
    return null;
  } catch (err) {
    return messageOf(err);
  }
}
