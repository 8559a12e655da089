import type { BehaviourDoc } from '../normalize/index.js';
import { checkName } from '../store/index.js';
import type { CollectionObjectInput, CollectionStore, SharedCollection, Sink, Watch, WatchHitQuery, WatchStore } from '../store/index.js';
import { describeSelection, selectedBehaviours, selectionKey, type ExportSelection } from './selectedBehaviours.js';
import { derivedId } from './stixIds.js';
import { stixObjectsOf, type StixObject } from './stixObjects.js';
import { EXTENSION_DEFINITION, IDENTITY } from './stixProducer.js';

/** What sharing reads and writes. */
export interface SharingStore {
  sink: Sink;
  watches: WatchStore;
  collections: CollectionStore;
}

/** How late a hit may be recorded (a worker's clock behind serve's, a slow commit): a sync position stays this far behind the clock. */
export const HIT_OVERLAP_MS = 60_000;
/** Objects per append: one transaction (SQLite) or one bulk request (Elasticsearch). */
const APPEND_CHUNK = 1000;

const uuidOf = (key: string): string => derivedId('collection', key).slice('collection--'.length);

/** The collection id of a watch: a watch removed and added again under its name starts a new collection. */
export function watchCollectionId(w: Pick<Watch, 'name' | 'createdAt'>): string {
  return uuidOf(`watch\u0000${w.name}\u0000${w.createdAt}`);
}

/** The collection id of an export saved under `name`. */
export function exportCollectionId(name: string): string {
  return uuidOf(`export\u0000${name}`);
}

/** A STIX object as a collection takes it: a report's own analysis is versioned, anything shared is not. */
export function collectionInput(o: StixObject): CollectionObjectInput {
  const version = typeof o.modified === 'string' ? o.modified : typeof o.created === 'string' ? o.created : '';
  return { id: o.id, type: o.type, version, object: o, versioned: o.type === 'malware-analysis' };
}

/** The producer's two objects, which every collection holds once. */
const producerInputs = (): CollectionObjectInput[] => [IDENTITY, EXTENSION_DEFINITION].map((o) => collectionInput({ ...o }));

/** Buffers objects and appends them to a collection in chunks. */
class Appender {
  private buffer: CollectionObjectInput[] = producerInputs();
  added = 0;
  /** Behaviours whose objects were offered (the producer's two alone are no reason to write). */
  offered = 0;

  constructor(
    private readonly collections: CollectionStore,
    private readonly id: string,
  ) {}

  async add(doc: BehaviourDoc, syncedFrom?: number): Promise<void> {
    this.buffer.push(...stixObjectsOf(doc).map(collectionInput));
    this.offered++;
    if (this.buffer.length >= APPEND_CHUNK) await this.flush(syncedFrom);
  }

  async flush(syncedFrom?: number): Promise<void> {
    if (this.buffer.length === 0 && syncedFrom === undefined) return;
    const { added } = await this.collections.append(this.id, this.buffer, syncedFrom === undefined ? {} : { syncedFrom });
    this.added += added;
    this.buffer = [];
  }
}

/** What a save or a sync added. */
export interface ShareSummary {
  collection: SharedCollection;
  behaviours: number;
  /** Objects added to the collection (those it held already are not counted). */
  added: number;
  /** False when a sync stopped at its time budget with hits still to read. */
  complete: boolean;
}

/**
 * Saves an export as a shared collection under `name` (created, or topped up with what the
 * selection holds now): TAXII clients poll it like a watch's.
 */
export async function saveExport(store: SharingStore, name: string, selection: ExportSelection): Promise<ShareSummary> {
  checkName('collection', name);
  const collection = await store.collections.save({
    id: exportCollectionId(name),
    name,
    kind: 'export',
    title: name,
    description: `sandtrail export: ${describeSelection(selection)}`,
    selection: selectionKey(selection),
    createdAt: Date.now(),
  });
  const appender = new Appender(store.collections, collection.id);
  let behaviours = 0;
  for await (const doc of selectedBehaviours(store, selection)) {
    await appender.add(doc);
    behaviours++;
  }
  await appender.flush();
  return { collection: (await store.collections.get(collection.id)) ?? collection, behaviours, added: appender.added, complete: true };
}

/** What a watch's collection holds, in words. */
export function watchCollectionDescription(w: Pick<Watch, 'name' | 'conditions'>): string {
  return `sandtrail watchlist ${w.name}: the behaviour reports it hit (${w.conditions.map((c) => `${c.kind} ${c.value}`).join(', ')})`;
}

/** The collection of a watch, created on its first sync. */
export async function watchCollection(store: Pick<SharingStore, 'collections'>, w: Watch): Promise<SharedCollection> {
  const id = watchCollectionId(w);
  return (
    (await store.collections.get(id)) ??
    store.collections.save({
      id,
      name: w.name,
      kind: 'watch',
      title: w.name,
      description: watchCollectionDescription(w),
      selection: selectionKey({ watch: w.name }),
      createdAt: w.createdAt,
    })
  );
}

/**
 * Brings a watch's collection up to its hits: the hits recorded from its sync position on, oldest
 * first, each behaviour's objects appended and the position moved with each chunk, so a sync
 * stopped by `budgetMs` (or a crash) goes on where it was. The position never passes the clock of
 * the read less HIT_OVERLAP_MS: a hit a worker records late (its clock behind, its commit slow)
 * is read by the next sync; hits older than that were all there to read, and are not read again.
 */
export async function syncWatchCollection(
  store: SharingStore,
  w: Watch,
  o: { budgetMs?: number; pageSize?: number; now?: () => number } = {},
): Promise<ShareSummary> {
  const now = o.now ?? Date.now;
  const started = now();
  const pageSize = o.pageSize ?? 200;
  const collection = await watchCollection(store, w);
  const appender = new Appender(store.collections, collection.id);
  const since = collection.syncedFrom;
  // every hit recorded before this time was there to be read by now
  const settled = started - HIT_OVERLAP_MS;
  const at = (t: number): number => Math.max(since, Math.min(t, settled));
  let after: WatchHitQuery['after'];
  let last: number | undefined;
  let behaviours = 0;
  let complete = true;
  for (;;) {
    const hits = await store.watches.hits(w.name, { since, limit: pageSize, oldestFirst: true, ...(after ? { after } : {}) });
    for (const h of hits) {
      const doc = await store.sink.get(h.behaviourId);
      last = h.at;
      // expired or pruned since the hit: nothing left to share
      if (!doc) continue;
      // hits recorded at this very millisecond may follow: the position stays on it
      await appender.add(doc, at(h.at));
      behaviours++;
    }
    if (hits.length < pageSize) break;
    after = hits[hits.length - 1];
    if (o.budgetMs !== undefined && now() - started > o.budgetMs) {
      complete = false;
      break;
    }
  }
  // read through: every hit up to the last one was read (none at all: every hit until settled)
  const position = last === undefined ? at(Number.MAX_SAFE_INTEGER) : at(complete ? last + 1 : last);
  // nothing new and the position where it was: nothing to write
  if (appender.offered > 0 || position !== since) await appender.flush(position);
  return { collection: (await store.collections.get(collection.id)) ?? collection, behaviours, added: appender.added, complete };
}
