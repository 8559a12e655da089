import type { Cluster, Redis } from 'ioredis';
import type { Config } from '../config/index.js';
import { errorCode, messageOf, SandtrailError } from '../errors/index.js';
import { normalizeAndSerialize, rejectedTextLetter } from '../feed/index.js';
import { callWithRetry, PagingGuard, type GtiClient } from '../gti/index.js';
import type { BehaviourDoc } from '../normalize/index.js';
import { type Store } from '../store/index.js';
import { metaOf } from '../wire/index.js';
import { meteredClient } from './meteredClient.js';
import { RunBudget } from './RunBudget.js';

/** Relationships `fetch --relationships` reads and stores with the document. */
export const FETCHED_RELATIONSHIPS = ['file', 'attack_techniques'] as const;

export interface FetchResult {
  id: string;
  /** `stored`: written; `stale`: a newer version was already stored; `rejected`: dead-lettered. */
  status: 'stored' | 'stale' | 'rejected';
  doc: BehaviourDoc | null;
  /** Items per relationship stored with the document. */
  relationships: Partial<Record<(typeof FETCHED_RELATIONSHIPS)[number], number>>;
  apiUnits: number;
  reason?: string;
}

/**
 * `GET /file_behaviours/{id}` (the id encoded: sandbox names hold spaces), optionally its `file`
 * and `attack_techniques` relationships (paged collections followed to the end), normalized
 * like a feed line with the relationships inside, and written to the store. A report the
 * normalizer refuses goes to the dead letters (batch `fetch`). 1 API unit per request.
 */
export async function fetchBehaviour(o: {
  config: Config;
  redis: Redis | Cluster;
  store: Store;
  id: string;
  relationships?: boolean;
  run: string;
  maxApiUnits?: number;
  signal?: AbortSignal;
}): Promise<FetchResult> {
  const { config } = o;
  const budget = new RunBudget(o.redis, RunBudget.keyOf(config.queuePrefix, o.run), o.maxApiUnits ?? Number.POSITIVE_INFINITY);
  const { client, spent } = meteredClient({ config, redis: o.redis, budget, signal: o.signal });
  const retry = { retries: config.gti.maxRetries, backoffMs: config.gti.backoffMs, signal: o.signal };
  const base = `/file_behaviours/${encodeURIComponent(o.id)}`;
  const answer = (await callWithRetry(() => client.getJson(base, o.signal), retry)) as { data?: Record<string, unknown> };
  if (!answer || typeof answer.data !== 'object' || answer.data === null)
    throw new SandtrailError('GTI_BAD_RESPONSE', `GET /file_behaviours/{id}: the answer has no "data" object`);
  const record: Record<string, unknown> = { ...answer.data };
  const counts: FetchResult['relationships'] = {};
  // the budget reached while reading relationships: the report, paid for already, is stored without the rest
  let stopped: { err: unknown; unread: string[] } | undefined;
  if (o.relationships) {
    const rels: Record<string, unknown> =
      typeof record.relationships === 'object' && record.relationships ? { ...record.relationships } : {};
    for (const name of FETCHED_RELATIONSHIPS) {
      if (stopped) {
        stopped.unread.push(name);
        continue;
      }
      // a relationship the API has no object for (its file unknown to it) is empty, not the report's loss
      const items = await readRelationship(client, `${base}/${name}`, config.lookup.pageSize, retry).catch((err: unknown) => {
        if (errorCode(err) === 'GTI_NOT_FOUND') return [];
        if (errorCode(err) === 'BUDGET_EXCEEDED') {
          stopped = { err, unread: [name] };
          return null;
        }
        throw err;
      });
      if (items === null) continue;
      rels[name] = { data: name === 'file' ? (items[0] ?? null) : items };
      counts[name] = items.length;
    }
    record.relationships = rels;
  }
  const text = JSON.stringify(record);
  const n = normalizeAndSerialize(text, config.feed.maxDepth);
  if ('code' in n) {
    await o.store.dlq.put([rejectedTextLetter('fetch', 1, text, n, config.feed.dlqPrefixBytes)]);
    return { id: o.id, status: 'rejected', doc: null, relationships: counts, apiUnits: spent(), reason: `${n.code}: ${n.message}` };
  }
  const [r] = await o.store.sink.upsert([{ meta: metaOf(n.doc, n.depth), json: n.json }]);
  if (!r || r.status !== 'ok') {
    const reason = r ? `${r.code}: ${r.reason}` : 'no result';
    if (r?.status === 'retryable') throw new SandtrailError('SINK_BUSY', `the store did not take ${o.id}: ${reason}`);
    return { id: n.doc.id, status: 'rejected', doc: n.doc, relationships: counts, apiUnits: spent(), reason };
  }
  if (stopped) {
    throw new SandtrailError(
      'BUDGET_EXCEEDED',
      `${messageOf(stopped.err)}; the report ${n.doc.id} is stored without its relationships ${stopped.unread.join(', ')}`,
    );
  }
  return { id: n.doc.id, status: r.stale ? 'stale' : 'stored', doc: n.doc, relationships: counts, apiUnits: spent() };
}

/** Every item of a relationship: a single object (`file`) or a paged list followed to its end. */
async function readRelationship(
  client: GtiClient,
  path: string,
  limit: number,
  retry: { retries: number; backoffMs: number; signal?: AbortSignal },
): Promise<unknown[]> {
  const out: unknown[] = [];
  const guard = new PagingGuard(`GET ${path}`);
  let cursor: string | null = null;
  do {
    const url: string = `${path}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = (await callWithRetry(() => client.getJson(url, retry.signal), retry)) as { data?: unknown; meta?: { cursor?: unknown } };
    // a list is paged; a single object (`file`) is the whole relationship
    const list = Array.isArray(page?.data) ? page.data : null;
    if (list) out.push(...list);
    else if (page?.data !== undefined && page.data !== null) out.push(page.data);
    const next = typeof page?.meta?.cursor === 'string' && page.meta.cursor !== '' && list ? page.meta.cursor : null;
    cursor = guard.next(next, list ? list.length : 1);
  } while (cursor !== null);
  return out;
}
