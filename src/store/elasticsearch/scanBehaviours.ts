import type { Client, estypes } from '@elastic/elasticsearch';
import type { BehaviourDoc } from '../../normalize/index.js';
import { pivotKey, type ScanPage, type ScanQuery } from '../Sink.js';
import { isIndexNotFound, readFailure } from './classify.js';
import { PIVOT_FIELDS } from './mapping.js';
import { ECS_ROOTS, stripProjection } from './project.js';

/** Below every stored date: after (id, this) in (id asc, date desc) order skips every copy of id. */
const BEFORE_ANY_DATE = Number.MIN_SAFE_INTEGER;

/**
 * `Sink.scan` on the behaviours alias: search_after on (`id` asc, `last_modification_date` desc),
 * so the copies of a behaviour in two day indices (a write in flight) are adjacent and the newest
 * comes first; the cursor is the last id, and the next page starts after every copy of it.
 */
export async function scanBehaviours(
  client: Client,
  alias: string,
  q: ScanQuery,
  cursor: string | undefined,
  limit: number,
): Promise<ScanPage> {
  const filter: estypes.QueryDslQueryContainer[] = [];
  if (q.pivot) {
    const key = pivotKey(q.pivot.value);
    if (key === '') return { docs: [] };
    filter.push({ term: { [PIVOT_FIELDS[q.pivot.kind]]: key } });
  }
  if (q.since !== undefined || q.until !== undefined) {
    const range = { ...(q.since !== undefined ? { gte: q.since } : {}), ...(q.until !== undefined ? { lt: q.until } : {}) };
    filter.push({ range: { analysis_date: { ...range, format: 'epoch_second' } } });
  }
  const size = Math.max(1, Math.floor(limit));
  try {
    const r = await client.search<Record<string, unknown>>({
      index: alias,
      query: { bool: { filter } },
      sort: [{ id: 'asc' }, { last_modification_date: 'desc' }],
      _source: { excludes: [...ECS_ROOTS] },
      size,
      track_total_hits: false,
      allow_partial_search_results: false,
      ...(cursor !== undefined ? { search_after: [cursor, BEFORE_ANY_DATE] } : {}),
    });
    const hits = r.hits.hits;
    const docs: BehaviourDoc[] = [];
    let last: string | undefined;
    for (const h of hits) {
      if (!h._source || h._id === last) continue;
      last = h._id;
      docs.push(stripProjection(h._source));
    }
    const end = hits[hits.length - 1]?._id;
    return hits.length < size || end === undefined ? { docs } : { docs, next: end };
  } catch (err) {
    if (isIndexNotFound(err)) return { docs: [] };
    throw readFailure('Elasticsearch scan', err);
  }
}
