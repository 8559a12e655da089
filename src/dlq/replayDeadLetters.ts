import { minuteStartSeconds } from '../minute/index.js';
import { normalizeLine, type BehaviourDoc } from '../normalize/index.js';
import { type DeadLetter, type DeadLetterStore, type Sink } from '../store/index.js';
import { sinkDocOf, type SinkDoc } from '../wire/index.js';

export interface ReplayResult {
  replayed: number;
  stillRejected: number;
  retryable: number;
  /** Entries keeping only a prefix of their line: only a backfill of their batch can bring them back. */
  needsSource: number;
  /** The batches of those entries, each once (bounded: at most MAX_LISTED). */
  needsSourceBatches: string[];
  /** Document ids indexed (bounded: at most MAX_LISTED; `replayed` has the count). */
  indexedIds: string[];
  /** Ids asked for that the dead-letter store does not hold. */
  notFound: string[];
  /** Watch notifications delivered this time (and removed). */
  redelivered: number;
  /** Stopped by `signal` before every entry was tried: the rest stay, for the next replay. */
  interrupted: boolean;
}

export interface ReplayOptions {
  /** Nesting limit of the normalizer (feed.maxDepth). */
  maxDepth?: number;
  /**
   * Told about each document a replay writes as new state, as the index stage tells its hooks
   * (watches): a behaviour stored late through a replay is a hit like any other.
   */
  onStored?: (docs: readonly SinkDoc[]) => Promise<void>;
  /**
   * Sends an undelivered watch notification again (stage `watch`): null once delivered, else why
   * not. Without it those entries are left as they are.
   */
  redeliver?: (entry: DeadLetter) => Promise<string | null>;
  /** Stops the replay between two entries (the one under way finishes). */
  signal?: AbortSignal;
}

/** Lists in the result stay bounded whatever the store holds. */
const MAX_LISTED = 1000;
/** Entries tried between two turns of the event loop. */
const YIELD_EVERY = 50;
/** Entries are read a page at a time; each entry keeps at most feed.dlqPrefixBytes of raw text. */
const PAGE = 200;

/**
 * Re-runs dead letters through the current normalizer and sink. Entries that now pass are
 * indexed and removed; the others stay, with their (possibly new) reason updated.
 */
export async function replayDeadLetters(
  dlq: DeadLetterStore,
  sink: Sink,
  select: { all: true } | { ids: readonly string[] },
  opts: ReplayOptions = {},
): Promise<ReplayResult> {
  const result: ReplayResult = {
    replayed: 0,
    stillRejected: 0,
    retryable: 0,
    needsSource: 0,
    needsSourceBatches: [],
    indexedIds: [],
    notFound: [],
    redelivered: 0,
    interrupted: false,
  };
  const entries: AsyncIterable<DeadLetter | null> =
    'all' in select
      ? dlq.iterate(PAGE)
      : (async function* () {
          // an id given twice is replayed once (asked again, it would read as not found)
          for (const id of new Set(select.ids)) {
            const entry = await dlq.get(id);
            if (!entry) result.notFound.push(id);
            yield entry;
          }
        })();
  let tried = 0;
  for await (const entry of entries) {
    // a store answering at once (SQLite) never leaves the event loop a turn: a stop signal is seen only between turns
    if (++tried % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    if (opts.signal?.aborted) {
      result.interrupted = true;
      break;
    }
    if (!entry) continue;
    // an undelivered watch notification is no document: it is sent again, never normalized
    if (entry.stage === 'watch') {
      if (!opts.redeliver) continue;
      const failed = await opts.redeliver(entry);
      if (failed === null) {
        await dlq.remove([entry.id]);
        result.redelivered += 1;
      } else {
        await dlq.put([{ ...entry, message: failed }]);
        result.stillRejected += 1;
      }
      continue;
    }
    if (entry.rawTruncated) {
      // nothing to re-run here, and nothing to rewrite: the entry stays as it is
      result.needsSource += 1;
      if (!result.needsSourceBatches.includes(entry.batch) && result.needsSourceBatches.length < MAX_LISTED) {
        result.needsSourceBatches.push(entry.batch);
      }
      continue;
    }
    const attempt = reprocess(entry, opts);
    if ('rejection' in attempt) {
      await dlq.put([{ ...entry, ...attempt.rejection }]);
      result.stillRejected += 1;
      continue;
    }
    const [item] = await sink.upsert([attempt.doc]);
    if (item?.status === 'ok') {
      // before the entry goes: a hook that fails (its store) leaves the entry for the next replay
      if (!item.stale) await opts.onStored?.([attempt.doc]);
      await dlq.remove([entry.id]);
      result.replayed += 1;
      if (result.indexedIds.length < MAX_LISTED) result.indexedIds.push(attempt.doc.meta.id);
    } else if (item?.status === 'retryable') {
      result.retryable += 1;
    } else {
      await dlq.put([{ ...entry, code: item?.code ?? 'rejected', message: item?.reason ?? 'rejected by sink' }]);
      result.stillRejected += 1;
    }
  }
  return result;
}

function reprocess(
  entry: DeadLetter,
  opts: ReplayOptions,
): { doc: SinkDoc } | { rejection: { code: string; path: string | null; message: string } } {
  if (entry.rawEncoding !== 'utf8') {
    return { rejection: { code: 'invalid_utf8', path: '$', message: 'line is not valid UTF-8' } };
  }
  if (entry.stage === 'index') {
    // Index failures keep the normalized document: it only needs writing again.
    try {
      return { doc: sinkDocOf(JSON.parse(entry.raw) as BehaviourDoc, entry.raw) };
    } catch (err) {
      return { rejection: { code: 'not_json', path: '$', message: `stored document is not JSON: ${(err as Error).message}` } };
    }
  }
  // dated as the feed stage would have: by its batch's minute when it has one
  const r = normalizeLine(entry.raw, { maxDepth: opts.maxDepth, undatedAt: minuteStartSeconds(entry.batch) });
  return r.ok ? { doc: sinkDocOf(r.doc) } : { rejection: { code: r.rejection.code, path: r.rejection.path, message: r.rejection.message } };
}
