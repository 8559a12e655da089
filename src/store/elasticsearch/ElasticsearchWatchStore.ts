import type { Client, estypes } from '@elastic/elasticsearch';
import { SandtrailError } from '../../errors/index.js';
import { normalizeWatch, watchHitKey, type Watch, type WatchHit, type WatchHitQuery, type WatchStore } from '../WatchStore.js';
import { errorType, isIndexNotFound, isNotFound, storeFailure } from './classify.js';
import { deleteMatching } from './deleteMatching.js';
import type { EsBookkeepingOptions } from './ElasticsearchDeadLetterStore.js';
import { esNames } from './names.js';
import { scan } from './scan.js';

/** The stored forms: the indices' field names (snake_case, as the mappings and Kibana show them). */
interface WatchSource {
  name: string;
  conditions: Watch['conditions'];
  notify: Watch['notify'];
  created_at: number;
}

interface HitSource {
  watch: string;
  behaviour_id: string;
  last_modified: number;
  sha256: string;
  sandbox: string;
  matched: WatchHit['matched'];
  at: number;
}

const toWatch = (s: WatchSource): Watch => ({ name: s.name, conditions: s.conditions, notify: s.notify, createdAt: s.created_at });

const toHit = (s: HitSource): WatchHit => ({
  watch: s.watch,
  behaviourId: s.behaviour_id,
  lastModified: s.last_modified,
  sha256: s.sha256,
  sandbox: s.sandbox,
  matched: s.matched,
  at: s.at,
});

/** Newest first; behaviour_id last makes the sort unique within a watch, as search_after needs. */
const HIT_SORT: estypes.Sort = [{ at: 'desc' }, { last_modified: 'desc' }, { behaviour_id: 'asc' }];
const OLDEST_FIRST: estypes.Sort = [{ at: 'asc' }, { last_modified: 'asc' }, { behaviour_id: 'desc' }];

const isConflict = (err: unknown): boolean => errorType(err) === 'version_conflict_engine_exception';

/** A failed read is never a write failure: retry later or fix the credentials. */
function readFailure(op: string, err: unknown): SandtrailError {
  const e = storeFailure(`watch store ${op}`, err);
  return e.code === 'SINK_WRITE_FAILED' ? new SandtrailError('SINK_UNAVAILABLE', e.message, e.details, { cause: err }) : e;
}

/**
 * Watches in `<prefix>-watches` (`_id` = name) and their hits in `<prefix>-watch-hits` (`_id` =
 * `<watch>|<behaviourId>|<lastModified>`). Both are written with op_type `create`: Elasticsearch's
 * own uniqueness of document ids (checked in real time, whatever the refresh) makes `add`
 * refuse a taken name and `recordHit` answer "new" exactly once, across every worker.
 */
export class ElasticsearchWatchStore implements WatchStore {
  readonly watchIndex: string;
  readonly hitIndex: string;

  constructor(
    private readonly client: Client,
    private readonly o: EsBookkeepingOptions = {},
  ) {
    const n = esNames(o.prefix);
    this.watchIndex = n.watches;
    this.hitIndex = n.watchHits;
  }

  private refresh(): boolean | 'wait_for' {
    // `list` and `hits` are searches: refresh the small index at once so the next read sees the write
    return this.o.refresh ?? true;
  }

  async add(watch: Watch): Promise<Watch> {
    const w = normalizeWatch(watch);
    const document: WatchSource = { name: w.name, conditions: w.conditions, notify: w.notify, created_at: w.createdAt };
    try {
      await this.o.ready?.();
      await this.client.create({ index: this.watchIndex, id: w.name, document, refresh: this.refresh() });
    } catch (err) {
      if (isConflict(err)) {
        throw new SandtrailError('WATCH_EXISTS', `a watch named "${w.name}" exists already (remove it first)`, { watch: w.name });
      }
      throw storeFailure('watch store add', err);
    }
    return w;
  }

  async list(): Promise<Watch[]> {
    const out: Watch[] = [];
    try {
      for await (const h of scan<WatchSource>(this.client, { index: this.watchIndex, sort: [{ name: 'asc' }], pageSize: 1000 })) {
        out.push(toWatch(h.source));
      }
    } catch (err) {
      // nothing added yet on this cluster (setup runs on the first write)
      if (isIndexNotFound(err)) return [];
      throw readFailure('list', err);
    }
    return out;
  }

  async get(name: string): Promise<Watch | null> {
    try {
      const r = await this.client.get<WatchSource>({ index: this.watchIndex, id: name });
      return r.found && r._source ? toWatch(r._source) : null;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw readFailure('get', err);
    }
  }

  async remove(name: string): Promise<boolean> {
    let existed = false;
    try {
      await this.client.delete({ index: this.watchIndex, id: name, refresh: this.refresh() });
      existed = true;
    } catch (err) {
      if (!isNotFound(err)) throw storeFailure('watch store remove', err);
    }
    try {
      // a watch added again under the same name starts without the old one's hits
      await deleteMatching(this.client, { index: this.hitIndex, query: { term: { watch: name } }, what: 'watch store remove hits' });
    } catch (err) {
      if (!isIndexNotFound(err)) throw storeFailure('watch store remove hits', err);
    }
    return existed;
  }

  async recordHit(hit: WatchHit, watchCreatedAt: number): Promise<boolean> {
    const document: HitSource = {
      watch: hit.watch,
      behaviour_id: hit.behaviourId,
      last_modified: hit.lastModified,
      sha256: hit.sha256,
      sandbox: hit.sandbox,
      matched: hit.matched,
      at: hit.at,
    };
    const id = watchHitKey(hit);
    try {
      await this.o.ready?.();
      await this.client.create({ index: this.hitIndex, id, document, refresh: this.refresh() });
    } catch (err) {
      // recorded before (a replayed job, another worker, a --retro run): not new
      if (isConflict(err)) return false;
      throw storeFailure('watch store recordHit', err);
    }
    // no transaction spans two indices: the hit is taken back when its watch is gone (a get is
    // real-time), and a remove under way deletes it by query after deleting the watch
    const current = await this.get(hit.watch);
    if (current?.createdAt === watchCreatedAt) return true;
    try {
      await this.client.delete({ index: this.hitIndex, id, refresh: this.refresh() });
    } catch (err) {
      if (!isNotFound(err)) throw storeFailure('watch store recordHit', err);
    }
    return false;
  }

  async hits(name: string, q: WatchHitQuery = {}): Promise<WatchHit[]> {
    const filter: estypes.QueryDslQueryContainer[] = [{ term: { watch: name } }];
    if (q.since !== undefined) filter.push({ range: { at: { gte: q.since } } });
    const out: WatchHit[] = [];
    try {
      for await (const h of scan<HitSource>(this.client, {
        index: this.hitIndex,
        query: { bool: { filter } },
        sort: q.oldestFirst ? OLDEST_FIRST : HIT_SORT,
        // date fields sort by epoch milliseconds, last_modified (epoch seconds) included
        ...(q.after ? { searchAfter: [q.after.at, q.after.lastModified * 1000, q.after.behaviourId] } : {}),
        offset: q.offset ?? 0,
        limit: q.limit ?? 1000,
        pageSize: 1000,
      })) {
        out.push(toHit(h.source));
      }
    } catch (err) {
      if (isIndexNotFound(err)) return [];
      throw readFailure('hits', err);
    }
    return out;
  }
}
