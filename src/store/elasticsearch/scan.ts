import type { Client, estypes } from '@elastic/elasticsearch';

export const MAX_RESULT_WINDOW = 10_000;

export interface ScanOptions {
  index: string;
  query?: estypes.QueryDslQueryContainer;
  /** Must end with a unique field so search_after never skips or repeats a document. */
  sort: estypes.Sort;
  pageSize?: number;
  source?: estypes.SearchSourceConfig;
  /** Documents to skip first (paged through, not `from`, so any offset works). */
  offset?: number;
  /** Stop after this many documents. */
  limit?: number;
  /** Start after the document with these sort values (a page's last one). */
  searchAfter?: estypes.SortResults;
}

/**
 * Streams matching documents in pages with search_after; memory stays at one page whatever the
 * result size, and `from + size` never hits `index.max_result_window`.
 */
export async function* scan<T>(client: Client, o: ScanOptions): AsyncGenerator<{ id: string; source: T }> {
  const pageSize = Math.min(MAX_RESULT_WINDOW, Math.max(1, o.pageSize ?? 1000));
  let skip = o.offset ?? 0;
  let left = o.limit ?? Infinity;
  let after: estypes.SortResults | undefined = o.searchAfter;
  while (left > 0) {
    // a small offset folds into the first page's `from` (one request instead of several)
    const from = after === undefined && skip > 0 && skip + Math.min(pageSize, left) <= MAX_RESULT_WINDOW ? skip : 0;
    if (from > 0) skip = 0;
    const size = skip > 0 ? pageSize : Math.min(pageSize, left);
    const r = await client.search<T>({
      index: o.index,
      ...(o.query ? { query: o.query } : {}),
      sort: o.sort,
      size,
      ...(from > 0 ? { from } : {}),
      track_total_hits: false,
      allow_partial_search_results: false,
      ...(o.source !== undefined ? { _source: o.source } : {}),
      ...(after ? { search_after: after } : {}),
    });
    const hits = r.hits.hits;
    for (const h of hits) {
      if (skip > 0) {
        skip--;
        continue;
      }
      if (left <= 0) return;
      left--;
      yield { id: h._id ?? '', source: h._source as T };
    }
    if (hits.length < size) return;
    after = hits[hits.length - 1]?.sort;
    if (!after) return;
  }
}
