import { ingestFreshness, PIVOT_KINDS, type PivotKind, type PivotSummary, type Store, type WatchHit } from '../store/index.js';

/** The kinds a landing view lists values of (a file's SHA-256 is no cluster). */
const KINDS = PIVOT_KINDS.filter((k): k is Exclude<PivotKind, 'sha256'> => k !== 'sha256');
/** Values of the window read per kind to find the new ones among them. */
const CANDIDATES = 100;
/** Entries per list. */
const SHOWN = 10;
const DAY_MS = 86_400_000;

/** What a hunter opening the page sees first: the store, how fresh it is, what is new, what fired. */
export interface Overview {
  /** The window "new" and "grew" are judged in: analysed at or after `since` (Unix seconds). */
  window: { seconds: number; since: number };
  store: { behaviours: number; oldestModified: number | null; newestModified: number | null };
  /** As `status` gives them: the minute ingested through, the lag, failed and missing minutes of the last day. */
  freshness: { doneThrough: string | null; lagSeconds: number | null; failed: string[]; missing: string[] };
  kinds: {
    kind: PivotKind;
    /** Values first seen in the window, the most behaviours first. */
    new: PivotSummary[];
    /** The values with the most behaviours analysed in the window (their figures over the window). */
    grew: PivotSummary[];
  }[];
  /** The newest hits of every watchlist. */
  watchHits: WatchHit[];
  /** Dead letters held, and the codes of those written in the last day. */
  deadLetters: { total: number; lastDay: { code: string; count: number }[] };
}

/**
 * The landing view's figures, read through the store's interfaces (so both stores answer them
 * alike): the newest values of the window among the CANDIDATES most frequent in it, whose first
 * sighting (over the whole store) falls in the window.
 */
export async function overviewOf(store: Store, o: { windowSeconds: number; now?: number }): Promise<Overview> {
  const now = o.now ?? Date.now();
  const since = Math.floor(now / 1000) - o.windowSeconds;
  const [behaviours, oldest, newest, fresh, total, codes, watches] = await Promise.all([
    store.sink.count(),
    store.retention.oldest(),
    store.retention.newest(),
    ingestFreshness(store.batches, { now }),
    store.dlq.count(),
    store.dlq.codes(now - DAY_MS),
    store.watches.list(),
  ]);
  const kinds: Overview['kinds'] = [];
  for (const kind of KINDS) {
    const inWindow = await store.hunt.top(kind, { since, limit: CANDIDATES });
    const overall = await store.hunt.valueSummaries(
      kind,
      inWindow.map((v) => v.value),
    );
    const firstInWindow = new Set(overall.filter((v) => v.firstSeen !== null && v.firstSeen >= since).map((v) => v.value));
    kinds.push({ kind, new: inWindow.filter((v) => firstInWindow.has(v.value)).slice(0, SHOWN), grew: inWindow.slice(0, SHOWN) });
  }
  const hits = (await Promise.all(watches.map((w) => store.watches.hits(w.name, { limit: SHOWN }))))
    .flat()
    .sort((a, b) => b.at - a.at || b.lastModified - a.lastModified)
    .slice(0, SHOWN);
  return {
    window: { seconds: o.windowSeconds, since },
    store: { behaviours, oldestModified: oldest, newestModified: newest },
    freshness: { doneThrough: fresh.doneThrough, lagSeconds: fresh.lagSeconds, failed: fresh.failed, missing: fresh.missing },
    kinds,
    watchHits: hits,
    deadLetters: { total, lastDay: codes },
  };
}
