import type { DeadLetterStore } from '../store/index.js';

/** Dead letters listed and removed per request. */
const PAGE = 1000;

/**
 * A minute read again whole (a backfill run once more after a fix: a raised line limit, a corrected
 * file) stores lines an earlier run dead-lettered: their dead letters go, so each line is in exactly
 * one place. Those this run wrote (`kept`) stay. One count when there is nothing to do; returns how
 * many were removed.
 */
export async function clearStaleDeadLetters(dlq: DeadLetterStore, batch: string, kept: ReadonlySet<string>): Promise<number> {
  if ((await dlq.count({ stage: 'normalize', batch })) <= kept.size) return 0;
  const stale: string[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await dlq.list({ stage: 'normalize', batch, limit: PAGE, offset });
    for (const d of page) if (!kept.has(d.id)) stale.push(d.id);
    if (page.length < PAGE) break;
  }
  let removed = 0;
  for (let i = 0; i < stale.length; i += PAGE) removed += await dlq.remove(stale.slice(i, i + PAGE));
  return removed;
}
