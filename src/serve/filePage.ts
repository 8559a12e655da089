import type { Store } from '../store/index.js';

/** A page of whole reports ends once it holds this many characters of JSON (reports run to MBs). */
const PAGE_MAX_BYTES = 16 * 1024 * 1024;

/** One page of a file's behaviours as served, how many it has, and the last one given when more follow. */
export interface FilePage {
  data: Record<string, unknown>[];
  count: number;
  /** The id the next page starts after; undefined on the last page. */
  last?: string;
}

/**
 * The behaviours of a file (by SHA-256, MD5 or SHA-1) after the id `after` ('' for the first
 * page), in id order: at most `limit`, and no more once the page holds PAGE_MAX_BYTES (one at
 * least). Null when the store knows no such file.
 */
export async function filePage(
  store: Store,
  hash: string,
  limit: number,
  after: string,
  served: (doc: Record<string, unknown> & { id: string }) => Record<string, unknown>,
): Promise<FilePage | null> {
  const ids =
    hash.length === 64
      ? await store.sink.query('sha256', hash)
      : ((await store.hunt.fileRollup(hash))?.reports.map((r) => r.id).sort() ?? []);
  // a file known to the store only by its private report still exists for the API
  if (ids.length === 0 && !(hash.length === 64 && (await store.privateFiles.get(hash)) !== null)) return null;
  // in the order `>` compares them, whatever order the store listed them in
  const rest = ids.filter((id) => id > after).sort();
  const data: Record<string, unknown>[] = [];
  let bytes = 0;
  let last: string | undefined;
  for (const id of rest.slice(0, limit)) {
    if (data.length > 0 && bytes >= PAGE_MAX_BYTES) break;
    const doc = await store.sink.get(id);
    last = id;
    if (!doc) continue;
    const object = served(doc as unknown as Record<string, unknown> & { id: string });
    bytes += JSON.stringify(object).length;
    data.push(object);
  }
  return { data, count: ids.length, ...(last !== undefined && last < (rest[rest.length - 1] as string) ? { last } : {}) };
}
