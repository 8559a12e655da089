import type { Client, estypes } from '@elastic/elasticsearch';
import { itemFailure } from './classify.js';

const PAGE = 1000;

/**
 * Deletes the documents of `index` matching `query`, at most `maxDocs`, and returns how many it
 * deleted: a page of ids by search, one bulk of deletes conditioned on the version each was read
 * at, repeated until nothing matches. What `_delete_by_query` with `conflicts: proceed` does,
 * without the reindex module that a node may lack. A document changed meanwhile is left alone (its
 * conflict skipped, as there); a round that deletes nothing ends it, so it ends whatever writers
 * do. Memory is one page. An item refused for a block, a full disk or missing privileges throws
 * the store fault it is (`what` names the operation).
 */
export async function deleteMatching(
  client: Client,
  o: { index: string; query: estypes.QueryDslQueryContainer; maxDocs?: number; what: string },
): Promise<number> {
  const max = o.maxDocs ?? Infinity;
  let deleted = 0;
  while (deleted < max) {
    const size = Math.min(PAGE, max - deleted);
    const r = await client.search({
      index: o.index,
      query: o.query,
      size,
      _source: false,
      seq_no_primary_term: true,
      track_total_hits: false,
      allow_partial_search_results: false,
    });
    const hits = r.hits.hits;
    if (hits.length === 0) break;
    const operations = hits.map((h) => ({
      delete: { _index: h._index, _id: h._id as string, if_seq_no: h._seq_no as number, if_primary_term: h._primary_term as number },
    }));
    const b = await client.bulk({ operations, refresh: true });
    let round = 0;
    for (const entry of b.items) {
      const item = entry.delete;
      if (item?.status === 200) round++;
      // gone meanwhile, or changed since it was read: skipped, as conflicts: proceed does
      else if (item?.status !== 404 && item?.status !== 409) throw itemFailure(o.what, item?._index ?? o.index, item);
    }
    deleted += round;
    if (round === 0 || hits.length < size) break;
  }
  return deleted;
}
