import type { Logger } from '../log/index.js';
import { errorCode, messageOf } from '../errors/index.js';
import { syncWatchCollection, watchCollectionId, type SharingStore } from '../share/index.js';
import type { Watch } from '../store/index.js';

/** How long one request may spend syncing a watch's collection before it answers with what is there. */
const SYNC_BUDGET_MS = 10_000;

/**
 * Brings watch collections up to their hits as TAXII requests read them: one sync per collection
 * at a time (requests arriving meanwhile wait for it), each bounded in time. The store it writes
 * through is opened on the first sync; a store this process may not write (a read-only file,
 * credentials that only read) is said once, and collections are served as they are.
 */
export class WatchSyncer {
  private readonly running = new Map<string, Promise<void>>();
  private store: Promise<SharingStore | undefined> | undefined;
  /** A failed sync is logged once, until one succeeds again (every request retries it). */
  private failing = false;

  constructor(
    private readonly open: () => Promise<SharingStore>,
    private readonly log: Logger,
    private readonly budgetMs = SYNC_BUDGET_MS,
  ) {}

  /** Syncs `w`'s collection, or joins the sync under way. */
  sync(w: Watch): Promise<void> {
    const id = watchCollectionId(w);
    const under = this.running.get(id);
    if (under) return under;
    const p = this.run(w).finally(() => this.running.delete(id));
    this.running.set(id, p);
    return p;
  }

  private async run(w: Watch): Promise<void> {
    this.store ??= this.open().catch((err: unknown) => {
      this.log.warn(
        { code: errorCode(err), err: messageOf(err) },
        'TAXII: the store cannot be written by serve, so watch collections are served as they are, without new hits',
      );
      return undefined;
    });
    const store = await this.store;
    if (!store) return;
    try {
      const r = await syncWatchCollection(store, w, { budgetMs: this.budgetMs });
      this.failing = false;
      if (r.added > 0)
        this.log.info({ watch: w.name, behaviours: r.behaviours, added: r.added, complete: r.complete }, 'TAXII collection synced');
    } catch (err) {
      // readers get what the collection holds; the next request tries again
      if (!this.failing)
        this.log.error(
          { watch: w.name, code: errorCode(err), err: messageOf(err) },
          'TAXII collection sync failed: its collection is served as it is until a sync succeeds',
        );
      this.failing = true;
    }
  }
}
