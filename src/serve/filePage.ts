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
  // an MD5 or SHA-1 names its SHA-256 through the file's roll-up: on the first page only, since a
  // behaviour id starts with its SHA-256 and the later pages start after one
  const sha256 = hash.length === 64 ? hash.toLowerCase() : after !== '' ? after.slice(0, 64) : undefined;
  const ids = sha256
    ? await store.sink.query('sha256', sha256)
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
