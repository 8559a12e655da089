/**
 * A collection of shared objects (TAXII 2.1): a watchlist's, filled from its hits, or a saved
 * export's. The store keeps the objects materialized, each with the time it was added, so a
 * client polling with `added_after` gets every object once.
 */
export interface SharedCollection {
  /** A UUID (the TAXII collection id). */
  id: string;
  /** The watch's name, or the name the export was saved under. */
  name: string;
  kind: 'watch' | 'export';
  title: string;
  description: string;
  /** What the collection holds, as the sharing layer wrote it (a JSON text). */
  selection: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Readers see the objects added at or before this (epoch microseconds); 0 while none is. */
  addedThrough: number;
  /** A watch collection's sync position: hits recorded at or after this (epoch ms) are still to be read. */
  syncedFrom: number;
}

/** A collection as the backends keep it (their columns and fields are snake_case). */
export interface StoredCollection {
  id: string;
  name: string;
  kind: SharedCollection['kind'];
  title: string;
  description: string;
  selection: string;
  created_at: number;
  added_through: number;
  synced_from: number;
}

/** A stored collection as the interface gives it. */
export function collectionOf(r: StoredCollection): SharedCollection {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    title: r.title,
    description: r.description,
    selection: r.selection,
    createdAt: r.created_at,
    addedThrough: r.added_through,
    syncedFrom: r.synced_from,
  };
}

/** What a collection is saved with (the rest is the store's). */
export type SharedCollectionInput = Omit<SharedCollection, 'addedThrough' | 'syncedFrom'>;

/** One object offered to a collection. */
export interface CollectionObjectInput {
  /** The STIX id. */
  id: string;
  type: string;
  /** The STIX `modified` (or `created`) timestamp: the object's version. */
  version: string;
  object: Record<string, unknown>;
  /**
   * A report's own object (a malware-analysis): a new version is added beside the earlier ones.
   * Any other object is held in the first version offered (the objects many reports share would
   * otherwise get a version per report).
   */
  versioned: boolean;
}

/** One object as a collection holds it. */
export interface CollectionObject {
  id: string;
  type: string;
  version: string;
  /** When it was added (epoch microseconds): unique and increasing within the collection. */
  dateAdded: number;
  object: Record<string, unknown>;
}

/** TAXII's `match[version]`: the first, the last, every version, or the versions named; any combination. */
export interface VersionMatch {
  first?: boolean;
  last?: boolean;
  all?: boolean;
  versions?: string[];
}

export interface CollectionObjectQuery {
  /** Only objects added after this (epoch microseconds). */
  addedAfter?: number;
  ids?: string[];
  types?: string[];
  /** Default: the last version of each object. */
  version?: VersionMatch;
  limit: number;
  /** A page ends before it passes this many bytes of objects (it holds one object at least). */
  maxBytes?: number;
}

export interface CollectionPage {
  objects: CollectionObject[];
  /** Whether more objects match after the page's last. */
  more: boolean;
}

/**
 * The shared collections of a store. `append` is the one writer of a collection's objects: it
 * adds what the collection does not hold yet, with dates after every date the collection ever
 * gave, and makes them visible together; appends to one collection run one at a time across
 * every process, so a date a reader has seen is never given to an object that appears later.
 */
export interface CollectionStore {
  /** Creates the collection, or updates its title, description and selection; its objects stay. */
  save(c: SharedCollectionInput): Promise<SharedCollection>;
  /** Every collection, by name. */
  list(): Promise<SharedCollection[]>;
  get(id: string): Promise<SharedCollection | null>;
  /** Removes a collection and its objects; false when none had that id. */
  remove(id: string): Promise<boolean>;
  /**
   * Adds the objects the collection does not hold (by id, or by id and version for a versioned
   * one), with new dates; `syncedFrom` moves the watch sync position in the same step. Answers how
   * many were added. A collection that does not exist is NOT_FOUND.
   */
  append(id: string, objects: readonly CollectionObjectInput[], o?: { syncedFrom?: number }): Promise<{ added: number }>;
  /** A page of the collection's visible objects, in the order they were added. */
  objects(id: string, q: CollectionObjectQuery): Promise<CollectionPage>;
}

/** Whether a version match is the default (the last version only). */
export function lastOnly(v: VersionMatch | undefined): boolean {
  return v === undefined || (v.last === true && !v.first && !v.all && !v.versions?.length);
}

/** Epoch microseconds now; `after` (the last one given) plus one when the clock has not passed it. */
export function nextMicros(after: number, nowMs: number = Date.now()): number {
  return Math.max(Math.floor(nowMs * 1000), after + 1);
}
