import type { BehaviourDoc } from '../normalize/index.js';
import { pivotKey, type PivotKind, type Sink, type WatchHitQuery, type WatchStore } from '../store/index.js';
import { BoundedSeen } from './BoundedSeen.js';

/** What an export holds: the behaviours of one pivot value, or of a watch's hits, within an optional window. */
export interface ExportSelection {
  pivot?: { kind: PivotKind; value: string };
  /** A watchlist's name: the behaviours it hit. */
  watch?: string;
  /** Analysed at or after (epoch seconds). */
  since?: number;
  /** Analysed before (epoch seconds). */
  until?: number;
}

/** The selection as one stable text (the bundle's and the event's ids derive from it). */
export function selectionKey(s: ExportSelection): string {
  return JSON.stringify([
    s.pivot?.kind ?? null,
    s.pivot ? pivotKey(s.pivot.value) : null,
    s.watch ?? null,
    s.since ?? null,
    s.until ?? null,
  ]);
}

/** The selection in words, for an event's title and the CLI's summary. */
export function describeSelection(s: ExportSelection): string {
  const parts: string[] = [];
  if (s.pivot) parts.push(`${s.pivot.kind} ${s.pivot.value}`);
  if (s.watch) parts.push(`hits of watch ${s.watch}`);
  if (s.since !== undefined) parts.push(`analysed from ${new Date(s.since * 1000).toISOString()}`);
  if (s.until !== undefined) parts.push(`analysed before ${new Date(s.until * 1000).toISOString()}`);
  return parts.length ? parts.join(', ') : 'every stored behaviour';
}

const inWindow = (d: BehaviourDoc, s: ExportSelection): boolean =>
  (s.since === undefined && s.until === undefined) ||
  (d.analysis_date !== null &&
    (s.since === undefined || d.analysis_date >= s.since) &&
    (s.until === undefined || d.analysis_date < s.until));

/**
 * The selected behaviours, one page of the store at a time: a pivot or window through
 * `Sink.scan` (the store's order), a watch's hits newest first (each behaviour once, newest
 * version). Memory is one page, whatever the selection holds.
 */
export async function* selectedBehaviours(
  store: { sink: Sink; watches: WatchStore },
  s: ExportSelection,
  pageSize = 200,
): AsyncGenerator<BehaviourDoc> {
  if (s.watch !== undefined) {
    const seen = new BoundedSeen();
    let after: WatchHitQuery['after'];
    for (;;) {
      const hits = await store.watches.hits(s.watch, { limit: pageSize, ...(after ? { after } : {}) });
      for (const h of hits) {
        if (!seen.add(h.behaviourId)) continue;
        const doc = await store.sink.get(h.behaviourId);
        if (doc && inWindow(doc, s) && (!s.pivot || matches(doc, s.pivot))) yield doc;
      }
      if (hits.length < pageSize) return;
      after = hits[hits.length - 1];
    }
  }
  let cursor: string | undefined;
  do {
    const page = await store.sink.scan({ ...(s.pivot ? { pivot: s.pivot } : {}), since: s.since, until: s.until }, cursor, pageSize);
    yield* page.docs;
    cursor = page.next;
  } while (cursor !== undefined);
}

function matches(d: BehaviourDoc, p: { kind: PivotKind; value: string }): boolean {
  const v = pivotKey(p.value);
  const of = (list: readonly string[]): boolean => list.some((x) => pivotKey(x) === v);
  switch (p.kind) {
    case 'behash':
      return d.pivots.behash === v;
    case 'sigma_rule_id':
      return of(d.pivots.sigma_rule_ids);
    case 'sha256':
      return d.sha256 === v;
    default:
      return of(d.pivots[p.kind]);
  }
}
