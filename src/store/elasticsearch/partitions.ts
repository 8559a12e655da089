import type { Client, estypes } from '@elastic/elasticsearch';
import { MAX_EPOCH_SECONDS } from '../../normalize/index.js';
import type { EsErrorCause } from './classify.js';
import { isNotFound } from './classify.js';
import type { EsNames } from './names.js';

const DAY_SEC = 86_400;

/** The last second a day index can be named for (9999-12-31T23:59:59Z): its name has a four-digit year, as the normalizer's dates do. */
export const MAX_PARTITION_SEC = MAX_EPOCH_SECONDS;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `<prefix>-behaviours-yyyy.MM.dd`: the index of the UTC day of `seconds` (a last_modification_date). */
export function dayIndexName(n: EsNames, seconds: number): string {
  const d = new Date(Math.floor(seconds / DAY_SEC) * DAY_SEC * 1000);
  return `${n.dayPrefix}${pad(d.getUTCFullYear(), 4)}.${pad(d.getUTCMonth() + 1)}.${pad(d.getUTCDate())}`;
}

/** The first second (Unix) of the day a day index is named for; undefined for any other index (the undated partition). */
export function dayOfIndex(n: EsNames, index: string): number | undefined {
  if (!index.startsWith(n.dayPrefix)) return undefined;
  const m = /^(\d{4})\.(\d{2})\.(\d{2})$/.exec(index.slice(n.dayPrefix.length));
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  const back = new Date(ms);
  // Date.UTC rolls 02.30 over to March: such a name is no day index
  if (back.getUTCDate() !== Number(m[3]) || back.getUTCMonth() !== Number(m[2]) - 1) return undefined;
  return ms / 1000;
}

/**
 * The concrete indices behind the read alias, trusted for `ttlMs` (about a second: another
 * writer's new day index is seen at its next call) and re-read on demand (after this writer
 * created one). `null`: the alias does not exist (setup never ran, or every partition was deleted).
 */
export class PartitionList {
  private cache: { at: number; indices: string[] } | undefined;

  constructor(
    private readonly client: Client,
    private readonly alias: string,
    private readonly ttlMs = 1000,
  ) {}

  async get(fresh = false): Promise<string[] | null> {
    const now = Date.now();
    if (!fresh && this.cache && now - this.cache.at < this.ttlMs) return this.cache.indices;
    let indices: string[];
    try {
      indices = Object.keys(await this.client.indices.getAlias({ name: this.alias })).sort();
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.cache = undefined;
      return null;
    }
    this.cache = { at: now, indices };
    return indices;
  }

  /** Forgets the list (partitions were created or deleted). */
  forget(): void {
    this.cache = undefined;
  }
}

/** A stored copy of a behaviour: the index that holds it and its version (its last_modification_date). */
export interface Copy {
  index: string;
  version: number;
}

/** An mget entry that failed for another reason than a missing index (a closed index, an unavailable shard). */
export class CopyLookupError extends Error {
  constructor(readonly esCause: EsErrorCause) {
    super(`${esCause.type ?? 'error'}: ${esCause.reason ?? ''}`);
  }
}

/** The entries of an mget answer that found a document; an index deleted meanwhile holds nothing, any other error fails the lookup. */
function found<T>(docs: readonly estypes.MgetResponseItem<T>[]): estypes.GetGetResult<T>[] {
  const out: estypes.GetGetResult<T>[] = [];
  for (const d of docs) {
    if ('error' in d && d.error) {
      if (d.error.type === 'index_not_found_exception') continue;
      throw new CopyLookupError(d.error as EsErrorCause);
    }
    if ('found' in d && d.found) out.push(d);
  }
  return out;
}

/**
 * Every copy of `ids` in `indices`, by id: one real-time mget of each id in each index, so a
 * write made a moment ago is found whatever the refresh interval (a search would miss it).
 * An index deleted since it was listed simply holds nothing.
 */
export async function locateCopies(client: Client, ids: readonly string[], indices: readonly string[]): Promise<Map<string, Copy[]>> {
  const out = new Map<string, Copy[]>();
  if (ids.length === 0 || indices.length === 0) return out;
  const docs = indices.flatMap((index) => ids.map((id) => ({ _index: index, _id: id })));
  const r = await client.mget({ docs, _source: false });
  for (const d of found(r.docs)) {
    if (typeof d._version !== 'number') continue;
    const list = out.get(d._id) ?? [];
    list.push({ index: d._index, version: d._version });
    out.set(d._id, list);
  }
  return out;
}

/** The newest of `copies` (ties: the one in `preferred`, else the first), or undefined. */
export function newestCopy(copies: readonly Copy[], preferred?: string): Copy | undefined {
  let best: Copy | undefined;
  for (const c of copies) {
    if (!best || c.version > best.version || (c.version === best.version && c.index === preferred)) best = c;
  }
  return best;
}

/**
 * The source of the newest copy of `id` across `indices` (real-time: a write of a moment ago is
 * seen), or null; `excludes` are left out of the source.
 */
export async function newestSource(
  client: Client,
  indices: readonly string[],
  id: string,
  excludes: readonly string[] = [],
): Promise<Record<string, unknown> | null> {
  if (indices.length === 0) return null;
  const r = await client.mget<Record<string, unknown>>({
    docs: indices.map((index) => ({ _index: index, _id: id })),
    ...(excludes.length > 0 ? { _source_excludes: [...excludes] } : {}),
  });
  let best: { version: number; source: Record<string, unknown> } | undefined;
  for (const d of found(r.docs)) {
    const version = d._version ?? 0;
    if (d._source && (!best || version > best.version)) best = { version, source: d._source };
  }
  return best?.source ?? null;
}
