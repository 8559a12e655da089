import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, estypes } from '@elastic/elasticsearch';
import type { EsErrorCause } from './classify.js';
import { isNotFound } from './classify.js';
import { replicaSettings, type Replicas } from './mapping.js';
import type { EsNames } from './names.js';
import { CopyLookupError, type Copy } from './partitions.js';
import { scan } from './scan.js';

const DAY_SEC = 86_400;
/** mget and bulk size of one round. */
const PAGE = 1000;
/** Rounds of a compare-and-set that keeps meeting another writer's change before it is given up (retryable). */
const MAX_ROUNDS = 20;

/**
 * `missing`: the store predates the locator (writes look every id up in every partition);
 * `filling`: it exists but does not yet cover every stored copy (writes record theirs in it, and
 * still look up every partition); `complete`: every copy is in it (writes look up only the
 * partitions it lists).
 */
export type LocatorState = 'missing' | 'filling' | 'complete';

/** A locator document: the partitions a behaviour's versions were written to, and the newest day among them. */
interface Entry {
  indices: string[];
  /** The UTC day (Unix seconds of its start) of the newest version recorded: retention drops the entry once that day is gone. */
  last_day: number;
}

/** The locator index's mapping; `_meta.complete` turns true once es setup has recorded every stored copy. */
export function locatorMappings(meta: Record<string, unknown>): Record<string, unknown> {
  return {
    dynamic: 'strict',
    _meta: { ...meta, complete: false },
    properties: {
      // read from _source only: no index, no doc values
      indices: { type: 'keyword', index: false, doc_values: false },
      last_day: { type: 'long' },
    },
  };
}

const dayOf = (seconds: number): number => Math.floor(seconds / DAY_SEC) * DAY_SEC;

/**
 * Where the copies of each behaviour may be: `<prefix>-locator`, one small document per behaviour
 * id listing every partition a version of it was written to. A write records its target
 * partition there before it writes (a compare-and-set on the entry's sequence number), so a later
 * write finds every copy by one real-time mget of the locator and one of the partitions listed,
 * whatever the number of partitions kept: the lookup costs the same at 7 and at 365 days. The
 * list only grows (a copy moved away leaves its partition listed): a superset is safe, and
 * retention drops an entry once every partition it could list is gone.
 */
export class Locator {
  private known: LocatorState | undefined;
  private at = 0;

  constructor(
    private readonly client: Client,
    private readonly n: EsNames,
    /** How long a state short of `complete` is trusted before it is asked again. */
    private readonly ttlMs = 1000,
  ) {}

  /** The locator's state; `complete` is kept for good, the others re-read after `ttlMs`. */
  async state(): Promise<LocatorState> {
    if (this.known === 'complete' || (this.known !== undefined && Date.now() - this.at < this.ttlMs)) return this.known;
    this.known = await locatorState(this.client, this.n);
    this.at = Date.now();
    return this.known;
  }

  /** Forgets the state (setup ran again). */
  forget(): void {
    this.known = undefined;
  }

  /**
   * Records, before they are written, that the versions `wants` go to their partitions, and
   * returns each id's list as it stood when the record was made (the partitions other writers
   * recorded included): every partition that may hold a copy. An entry another writer changed
   * meanwhile is read again and merged, so no writer's record is lost.
   */
  async record(wants: readonly { id: string; index: string; lmd: number }[]): Promise<Map<string, string[]>> {
    const want = new Map<string, { indices: Set<string>; lastDay: number }>();
    for (const w of wants) {
      const e = want.get(w.id) ?? { indices: new Set<string>(), lastDay: -1 };
      e.indices.add(w.index);
      e.lastDay = Math.max(e.lastDay, dayOf(w.lmd));
      want.set(w.id, e);
    }
    const listed = new Map<string, string[]>();
    const ids = [...want.keys()];
    for (let k = 0; k < ids.length; k += PAGE) await this.recordPage(ids.slice(k, k + PAGE), want, listed);
    return listed;
  }

  private async recordPage(
    page: string[],
    want: ReadonlyMap<string, { indices: Set<string>; lastDay: number }>,
    listed: Map<string, string[]>,
  ): Promise<void> {
    let pending = page;
    for (let round = 0; pending.length > 0; round++) {
      if (round === MAX_ROUNDS) {
        throw new CopyLookupError({
          type: 'version_conflict_engine_exception',
          reason: `the locator entries of ${pending.length} behaviour(s) kept changing under other writers`,
        });
      }
      const r = await this.client.mget<Entry>({ index: this.n.locator, ids: pending });
      const operations: estypes.BulkRequest['operations'] = [];
      const sent: string[] = [];
      for (const d of r.docs) {
        if ('error' in d && d.error) throw new CopyLookupError(d.error as EsErrorCause);
        const w = want.get(d._id);
        if (!w) continue;
        const found = 'found' in d && d.found ? d : undefined;
        const cur = found?._source?.indices ?? [];
        const curDay = found?._source?.last_day ?? -1;
        listed.set(d._id, cur);
        const add = [...w.indices].filter((i) => !cur.includes(i));
        if (add.length === 0 && curDay >= w.lastDay) continue;
        const entry: Entry = { indices: [...cur, ...add].sort(), last_day: Math.max(curDay, w.lastDay) };
        operations.push(
          found
            ? { index: { _id: d._id, if_seq_no: found._seq_no as number, if_primary_term: found._primary_term as number } }
            : { create: { _id: d._id } },
          entry,
        );
        sent.push(d._id);
      }
      if (sent.length === 0) return;
      const b = await this.client.bulk({ index: this.n.locator, operations });
      const again: string[] = [];
      b.items.forEach((item, k) => {
        const res = item.index ?? item.create;
        const id = sent[k] as string;
        if (res && res.status >= 200 && res.status < 300) return;
        // another writer changed or created the entry first: read it again and merge
        if (res?.status === 409) again.push(id);
        else
          throw new CopyLookupError(
            (res?.error as EsErrorCause | undefined) ?? { type: 'locator_write_failed', reason: `status ${res?.status}` },
          );
      });
      pending = again;
    }
  }
}

/** Reads the locator's state from its mapping's `_meta`. */
export async function locatorState(client: Client, n: EsNames, o: { signal?: AbortSignal } = {}): Promise<LocatorState> {
  try {
    const r = await client.indices.getMapping({ index: n.locator }, o.signal ? { signal: o.signal } : {});
    const meta = Object.values(r)[0]?.mappings?._meta as { complete?: unknown } | undefined;
    return meta?.complete === true ? 'complete' : 'filling';
  } catch (err) {
    if (isNotFound(err)) return 'missing';
    throw err;
  }
}

/** Marks the locator complete: every stored copy is recorded in it. */
export async function markLocatorComplete(client: Client, n: EsNames, meta: Record<string, unknown>): Promise<void> {
  await client.indices.putMapping({ index: n.locator, _meta: { ...meta, complete: true } });
}

/**
 * Records every copy the partitions hold in the locator (ids and versions read in pages, sorted
 * by id), the way a write records its own: writers recording theirs meanwhile are merged with,
 * never overwritten. Returns how many copies were recorded.
 */
export async function fillLocator(
  client: Client,
  n: EsNames,
  partitions: readonly string[],
  onPage?: (done: number) => void,
): Promise<number> {
  const locator = new Locator(client, n);
  let done = 0;
  for (const index of partitions) {
    let batch: { id: string; index: string; lmd: number }[] = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      await locator.record(batch);
      done += batch.length;
      onPage?.(done);
      batch = [];
    };
    for await (const h of scan<{ last_modification_date?: unknown }>(client, {
      index,
      query: { match_all: {} },
      sort: [{ id: 'asc' }],
      pageSize: PAGE,
      source: { includes: ['last_modification_date'] },
    })) {
      const lmd = h.source.last_modification_date;
      batch.push({ id: h.id, index, lmd: typeof lmd === 'number' ? lmd : 0 });
      if (batch.length >= PAGE) await flush();
    }
    await flush();
  }
  return done;
}

/**
 * Every copy of the ids in the partitions listed for each: one real-time mget of (id, partition)
 * pairs. A partition deleted since it was listed holds nothing.
 */
export async function copiesListed(client: Client, listed: ReadonlyMap<string, readonly string[]>): Promise<Map<string, Copy[]>> {
  const out = new Map<string, Copy[]>();
  const pairs = [...listed].flatMap(([id, indices]) => indices.map((index) => ({ _index: index, _id: id })));
  for (let k = 0; k < pairs.length; k += PAGE) {
    const r = await client.mget({ docs: pairs.slice(k, k + PAGE), _source: false });
    for (const d of r.docs) {
      if ('error' in d && d.error) {
        if (d.error.type === 'index_not_found_exception') continue;
        throw new CopyLookupError(d.error as EsErrorCause);
      }
      if (!('found' in d) || !d.found || typeof d._version !== 'number') continue;
      out.set(d._id, [...(out.get(d._id) ?? []), { index: d._index, version: d._version }]);
    }
  }
  return out;
}

/** Settings of the locator index: as many entries as behaviours kept, so the behaviours' primaries. */
export function locatorSettings(o: { shards?: number; replicas?: Replicas }): Record<string, unknown> {
  return { index: { number_of_shards: o.shards ?? 1, ...replicaSettings(o.replicas) } };
}

/**
 * Brings the locator to `complete` where that is safe: at once for a store this setup created
 * (nothing was written yet), else once writers still working without it have seen it (`waitMs`:
 * they ask its state again within a second) and what the partitions hold is recorded: nothing, or
 * every copy when `fill` (es setup; a writer's own setup leaves that to it, and writes look every
 * id up in every partition meanwhile). Returns what it did, for setup's report.
 */
export async function completeLocator(
  client: Client,
  n: EsNames,
  meta: Record<string, unknown>,
  o: { freshStore: boolean; fill: boolean; waitMs?: number; onProgress?: (done: number) => void },
): Promise<string[]> {
  if ((await locatorState(client, n)) === 'complete') return [];
  if (o.freshStore) {
    await markLocatorComplete(client, n, meta);
    return [`locator ${n.locator} complete (a new store)`];
  }
  const notYet = (held: number): string[] => [
    `locator ${n.locator} not yet filled: writes look every behaviour up in every partition until sandtrail es setup records the ${held} stored`,
  ];
  const before = (await client.count({ index: n.alias })).count;
  if (before > 0 && !o.fill) return notYet(before);
  await sleep(o.waitMs ?? 2500);
  const partitions = Object.keys(await client.indices.getAlias({ name: n.alias }));
  // what writers stored a moment ago becomes searchable, so the count and the scan see it
  await client.indices.refresh({ index: partitions, ignore_unavailable: true }).catch(() => undefined);
  const held = (await client.count({ index: n.alias })).count;
  if (held > 0 && !o.fill) return notYet(held);
  const recorded = held > 0 ? await fillLocator(client, n, partitions, o.onProgress) : 0;
  await markLocatorComplete(client, n, meta);
  return [`locator ${n.locator} complete (${recorded} stored behaviour copies recorded)`];
}
