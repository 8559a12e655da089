import { normalizeLine, type BehaviourDoc } from '../normalize/index.js';
import type { Sink } from '../sink/index.js';
import type { DeadLetter, DeadLetterStore } from './DeadLetterStore.js';

export interface ReplayResult {
  replayed: number;
  stillRejected: number;
  retryable: number;
  /** Ids of entries that were indexed and removed from the store. */
  indexedIds: string[];
}

/**
 * Re-runs dead letters through the current normalizer and sink. Entries that now pass are
 * indexed and removed; the others stay, with their (possibly new) reason updated.
 */
export async function replayDeadLetters(
  dlq: DeadLetterStore,
  sink: Sink,
  select: { all: true } | { ids: readonly string[] },
): Promise<ReplayResult> {
  const result: ReplayResult = { replayed: 0, stillRejected: 0, retryable: 0, indexedIds: [] };
  const entries: AsyncIterable<DeadLetter | null> =
    'all' in select
      ? dlq.iterate()
      : (async function* () {
          for (const id of select.ids) yield await dlq.get(id);
        })();
  for await (const entry of entries) {
    if (!entry) continue;
    const attempt = reprocess(entry);
    if ('rejection' in attempt) {
      await dlq.put([{ ...entry, ...attempt.rejection }]);
      result.stillRejected += 1;
      continue;
    }
    const [item] = await sink.upsert([attempt.doc]);
    if (item?.status === 'ok') {
      await dlq.remove([entry.id]);
      result.replayed += 1;
      result.indexedIds.push(attempt.doc.id);
    } else if (item?.status === 'retryable') {
      result.retryable += 1;
    } else {
      await dlq.put([{ ...entry, code: item?.code ?? 'rejected', message: item?.reason ?? 'rejected by sink' }]);
      result.stillRejected += 1;
    }
  }
  return result;
}

function reprocess(entry: DeadLetter): { doc: BehaviourDoc } | { rejection: { code: string; path: string | null; message: string } } {
  if (entry.rawTruncated) {
    return { rejection: { code: entry.code, path: entry.path, message: entry.message } };
  }
  if (entry.rawEncoding !== 'utf8') {
    return { rejection: { code: 'invalid_utf8', path: '$', message: 'line is not valid UTF-8' } };
  }
  if (entry.stage === 'index') {
    // Index failures keep the normalized document: it only needs writing again.
    return { doc: JSON.parse(entry.raw) as BehaviourDoc };
  }
  const r = normalizeLine(entry.raw);
  return r.ok ? { doc: r.doc } : { rejection: { code: r.rejection.code, path: r.rejection.path, message: r.rejection.message } };
}
