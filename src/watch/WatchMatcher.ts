import { conditionKey, type PivotKind, type Watch, type WatchCondition, type WatchStore } from '../store/index.js';
import { type DocMeta } from '../wire/index.js';

/** What matching needs of a stored behaviour: a chunk's DocMeta, or the same fields of a stored document. */
export type MatchableDoc = Pick<DocMeta, 'id' | 'sha256' | 'sandbox_name' | 'last_modification_date' | 'pivots'>;

/** One document matching one watch, with the watch's conditions it matched (in the watch's order). */
export interface WatchMatch {
  watch: Watch;
  doc: MatchableDoc;
  matched: WatchCondition[];
}

export interface WatchMatcherOptions {
  /** How long the loaded watches are trusted before the store is read again (default 5 s). */
  refreshMs?: number;
  /** Clock seam for tests. */
  now?: () => number;
}

export const DEFAULT_REFRESH_MS = 5000;

interface Entry {
  watch: Watch;
  condition: WatchCondition;
}

/** Every (kind, value) of a document that a condition can name. */
function* pivotValues(doc: MatchableDoc): Generator<[PivotKind, string]> {
  const p = doc.pivots;
  if (typeof doc.sha256 === 'string') yield ['sha256', doc.sha256];
  if (!p) return;
  if (typeof p.behash === 'string') yield ['behash', p.behash];
  for (const v of p.sigma_rule_ids ?? []) yield ['sigma_rule_id', v];
  for (const v of p.ja3 ?? []) yield ['ja3', v];
  for (const v of p.ja3s ?? []) yield ['ja3s', v];
  for (const v of p.dropped_sha256 ?? []) yield ['dropped_sha256', v];
}

/**
 * Matches documents against every stored watch. The watches are read from the store at most
 * every `refreshMs` and kept as one Map from (kind, normalized value) to the conditions naming
 * it, so a document costs one lookup per pivot value whatever the number of watches, and a
 * chunk costs nothing more when there are none. A `watch add` reaches running workers within
 * `refreshMs`, without a restart.
 */
export class WatchMatcher {
  private byKey = new Map<string, Entry[]>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | undefined;
  private readonly refreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Pick<WatchStore, 'list'>,
    o: WatchMatcherOptions = {},
  ) {
    this.refreshMs = o.refreshMs ?? DEFAULT_REFRESH_MS;
    this.now = o.now ?? Date.now;
  }

  /** The matches of `docs`, in document order then watch name order. */
  async match(docs: readonly MatchableDoc[]): Promise<WatchMatch[]> {
    await this.fresh();
    if (this.byKey.size === 0 || docs.length === 0) return [];
    const out: WatchMatch[] = [];
    for (const doc of docs) {
      const hits = new Map<string, { watch: Watch; conditions: Set<WatchCondition> }>();
      for (const [kind, value] of pivotValues(doc)) {
        for (const e of this.byKey.get(conditionKey(kind, value)) ?? []) {
          let h = hits.get(e.watch.name);
          if (!h) hits.set(e.watch.name, (h = { watch: e.watch, conditions: new Set() }));
          h.conditions.add(e.condition);
        }
      }
      for (const name of [...hits.keys()].sort()) {
        const h = hits.get(name) as { watch: Watch; conditions: Set<WatchCondition> };
        out.push({ watch: h.watch, doc, matched: h.watch.conditions.filter((c) => h.conditions.has(c)) });
      }
    }
    return out;
  }

  /** Forgets the loaded watches: the next match reads them again. */
  invalidate(): void {
    this.loadedAt = -Infinity;
  }

  private async fresh(): Promise<void> {
    if (this.now() - this.loadedAt < this.refreshMs) return;
    // concurrent chunks of one worker share one read
    this.loading ??= this.load().finally(() => (this.loading = undefined));
    await this.loading;
  }

  private async load(): Promise<void> {
    // a failed read throws: the index job is retried rather than a hit being missed
    const watches = await this.store.list();
    const byKey = new Map<string, Entry[]>();
    for (const watch of watches) {
      for (const condition of watch.conditions) {
        const key = conditionKey(condition.kind, condition.value);
        const list = byKey.get(key);
        if (list) list.push({ watch, condition });
        else byKey.set(key, [{ watch, condition }]);
      }
    }
    this.byKey = byKey;
    this.loadedAt = this.now();
  }
}
