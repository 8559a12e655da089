import type { Client, estypes } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import {
  collectionOf,
  nextMicros,
  type CollectionObject,
  type CollectionObjectInput,
  type CollectionObjectQuery,
  type CollectionPage,
  type CollectionStore,
  type SharedCollection,
  type SharedCollectionInput,
} from '../CollectionStore.js';
import { isIndexNotFound, isNotFound, itemFailure, readFailure, storeFailure } from './classify.js';
import { claimCollection, getCollection, isConflict, releaseCollection, type CollectionSource } from './collectionLease.js';
import { deleteMatching } from './deleteMatching.js';
import type { EsBookkeepingOptions } from './ElasticsearchDeadLetterStore.js';
import { esNames } from './names.js';

interface ObjectSource {
  collection: string;
  object_id: string;
  type: string;
  version: string;
  date_added: number;
  first: boolean;
  latest: boolean;
  object: Record<string, unknown>;
}

/** An object's document id: the first version of a shared object, each version of a versioned one. */
const keyOf = (collection: string, o: Pick<CollectionObjectInput, 'id' | 'version' | 'versioned'>): string =>
  o.versioned ? `${collection}|${o.id}|${o.version}` : `${collection}|${o.id}`;

/**
 * Shared collections in `<prefix>-collections` (`_id` = the collection id) and their objects in
 * `<prefix>-collection-objects`. No transaction spans documents, so an append holds the
 * collection by a lease written with optimistic concurrency (`if_seq_no`), writes its objects
 * (refreshed before it goes on), and only then raises the collection's `added_through`: readers
 * see nothing past it, so an object appears with a date after every date they were shown.
 */
export class ElasticsearchCollectionStore implements CollectionStore {
  private readonly collections: string;
  private readonly objectIndex: string;

  constructor(
    private readonly client: Client,
    private readonly o: EsBookkeepingOptions = {},
  ) {
    const n = esNames(o.prefix);
    this.collections = n.collections;
    this.objectIndex = n.collectionObjects;
  }

  async save(c: SharedCollectionInput): Promise<SharedCollection> {
    try {
      await this.o.ready?.();
      await this.client.update<CollectionSource, Partial<CollectionSource>>({
        index: this.collections,
        id: c.id,
        doc: { title: c.title, description: c.description, selection: c.selection },
        upsert: {
          id: c.id,
          name: c.name,
          kind: c.kind,
          title: c.title,
          description: c.description,
          selection: c.selection,
          created_at: c.createdAt,
          added_through: 0,
          synced_from: 0,
          lease_until: 0,
        },
        refresh: true,
        retry_on_conflict: 5,
      });
    } catch (err) {
      throw storeFailure('collection store save', err);
    }
    const saved = await this.get(c.id);
    if (!saved) throw new SandtrailError('SINK_UNAVAILABLE', `collection ${c.id} was saved but cannot be read back`);
    return saved;
  }

  async list(): Promise<SharedCollection[]> {
    try {
      const r = await this.client.search<CollectionSource>({
        index: this.collections,
        size: 10_000,
        sort: [{ name: 'asc' }, { id: 'asc' }],
      });
      return r.hits.hits.flatMap((h) => (h._source ? [collectionOf(h._source)] : []));
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw readFailure('collection store list', err);
    }
  }

  async get(id: string): Promise<SharedCollection | null> {
    const got = await getCollection(this.client, this.collections, id);
    return got ? collectionOf(got.source) : null;
  }

  async remove(id: string): Promise<boolean> {
    let existed = false;
    try {
      await this.client.delete({ index: this.collections, id, refresh: true });
      existed = true;
    } catch (err) {
      if (!isNotFound(err)) throw storeFailure('collection store remove', err);
    }
    try {
      await deleteMatching(this.client, {
        index: this.objectIndex,
        query: { term: { collection: id } },
        what: 'collection store remove objects',
      });
    } catch (err) {
      if (!isIndexNotFound(err)) throw storeFailure('collection store remove objects', err);
    }
    return existed;
  }

  async append(id: string, objects: readonly CollectionObjectInput[], o: { syncedFrom?: number } = {}): Promise<{ added: number }> {
    await this.o.ready?.();
    const lease = await claimCollection(this.client, this.collections, id);
    let done = false;
    try {
      const fresh = await this.notHeld(id, objects);
      const latest = await this.latestVersions(
        id,
        fresh.filter((x) => x.versioned).map((x) => x.id),
      );
      // an append that ended before raising added_through left objects no reader saw: dates go past them
      const orphan = await this.lastDate(id);
      let last = Math.max(lease.source.added_through, orphan);
      const operations: estypes.BulkRequest['operations'] = [];
      for (const obj of fresh) {
        const before = latest.get(obj.id);
        last = nextMicros(last);
        if (before) operations.push({ update: { _index: this.objectIndex, _id: before } }, { doc: { latest: false } });
        const doc: ObjectSource = {
          collection: id,
          object_id: obj.id,
          type: obj.type,
          version: obj.version,
          date_added: last,
          first: !before,
          latest: true,
          object: obj.object,
        };
        operations.push({ create: { _index: this.objectIndex, _id: keyOf(id, obj) } }, doc);
      }
      if (operations.length) {
        const r = await this.client.bulk({ operations, refresh: 'wait_for' });
        for (const item of r.items) {
          const res = item.create ?? item.update;
          // created by an append that did not finish: held already, its date is among the orphans'
          if (res?.error && !(item.create && res.status === 409)) throw itemFailure('collection store append', this.objectIndex, res);
        }
      }
      await this.client.update<CollectionSource, Partial<CollectionSource>>({
        index: this.collections,
        id,
        doc: { added_through: last, lease_until: 0, ...(o.syncedFrom !== undefined ? { synced_from: o.syncedFrom } : {}) },
        if_seq_no: lease.seqNo,
        if_primary_term: lease.primaryTerm,
        refresh: true,
      });
      done = true;
      return { added: fresh.length };
    } catch (err) {
      if (isConflict(err))
        throw new SandtrailError(
          'SINK_UNAVAILABLE',
          `collection ${id}: another process took it over while this append ran (its lease ran out)`,
        );
      throw storeFailure('collection store append', err);
    } finally {
      // a failed append lets the next one in at once rather than after the lease
      if (!done) await releaseCollection(this.client, this.collections, id, lease).catch(() => undefined);
    }
  }

  async objects(id: string, q: CollectionObjectQuery): Promise<CollectionPage> {
    const got = await getCollection(this.client, this.collections, id);
    if (!got) return { objects: [], more: false };
    const filter: estypes.QueryDslQueryContainer[] = [
      { term: { collection: id } },
      { range: { date_added: { gt: q.addedAfter ?? 0, lte: got.source.added_through } } },
    ];
    if (q.ids?.length) filter.push({ terms: { object_id: q.ids } });
    if (q.types?.length) filter.push({ terms: { type: q.types } });
    const v = q.version ?? { last: true };
    if (!v.all) {
      const should: estypes.QueryDslQueryContainer[] = [];
      if (v.last) should.push({ term: { latest: true } });
      if (v.first) should.push({ term: { first: true } });
      if (v.versions?.length) should.push({ terms: { version: v.versions } });
      filter.push({ bool: { should, minimum_should_match: 1 } });
    }
    try {
      const r = await this.client.search<ObjectSource>({
        index: this.objectIndex,
        query: { bool: { filter } },
        sort: [{ date_added: 'asc' }],
        size: q.limit + 1,
        track_total_hits: false,
      });
      const page: CollectionObject[] = [];
      let bytes = 0;
      let more = false;
      for (const h of r.hits.hits) {
        const s = h._source;
        if (!s) continue;
        const size = JSON.stringify(s.object).length;
        if (page.length >= q.limit || (page.length > 0 && q.maxBytes !== undefined && bytes + size > q.maxBytes)) {
          more = true;
          break;
        }
        bytes += size;
        page.push({ id: s.object_id, type: s.type, version: s.version, dateAdded: s.date_added, object: s.object });
      }
      return { objects: page, more };
    } catch (err) {
      if (isIndexNotFound(err)) return { objects: [], more: false };
      throw readFailure('collection store objects', err);
    }
  }

  /** The objects the collection does not hold, each once. */
  private async notHeld(id: string, objects: readonly CollectionObjectInput[]): Promise<CollectionObjectInput[]> {
    const unique = new Map<string, CollectionObjectInput>();
    for (const obj of objects) if (!unique.has(keyOf(id, obj))) unique.set(keyOf(id, obj), obj);
    if (unique.size === 0) return [];
    let r: estypes.MgetResponse;
    try {
      r = await this.client.mget({ index: this.objectIndex, ids: [...unique.keys()], _source: false });
    } catch (err) {
      if (isIndexNotFound(err)) return [...unique.values()];
      throw err;
    }
    const found = new Set(r.docs.filter((d) => 'found' in d && d.found).map((d) => d._id));
    return [...unique.entries()].filter(([k]) => !found.has(k)).map(([, v]) => v);
  }

  /** The document id of the latest version held, for each of these versioned objects that has one. */
  private async latestVersions(id: string, objectIds: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (objectIds.length === 0) return out;
    const r = await this.client.search<Pick<ObjectSource, 'object_id'>>({
      index: this.objectIndex,
      query: { bool: { filter: [{ term: { collection: id } }, { terms: { object_id: objectIds } }, { term: { latest: true } }] } },
      _source: ['object_id'],
      size: objectIds.length,
    });
    for (const h of r.hits.hits) if (h._source && h._id) out.set(h._source.object_id, h._id);
    return out;
  }

  /** The last date any object of the collection was given, visible or not. */
  private async lastDate(id: string): Promise<number> {
    try {
      const r = await this.client.search<Pick<ObjectSource, 'date_added'>>({
        index: this.objectIndex,
        query: { term: { collection: id } },
        sort: [{ date_added: 'desc' }],
        _source: ['date_added'],
        size: 1,
      });
      return r.hits.hits[0]?._source?.date_added ?? 0;
    } catch (err) {
      if (isIndexNotFound(err)) return 0;
      throw err;
    }
  }
}
