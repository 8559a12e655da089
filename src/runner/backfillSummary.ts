import { errorCode, messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { MinuteId } from '../minute/index.js';
import { failedEntry, type BatchLogEntry, type Store } from '../store/index.js';

/* What a backfill reports at its end, read back from the durable batch log and dead letters. */

export interface BackfillSummary {
  /** `pending`: not finished when the run was interrupted; a finished run reports those as failed. */
  batches: { ok: number; empty: number; missing: number; failed: number; pending: number };
  records: { indexed: number; rejected: number };
  api_units: number;
  /** Every failed or unfinished minute with the reason (empty when all went well). */
  failures: { batch: MinuteId; status: 'failed' | 'pending'; reason: string }[];
  /** Feed jobs enqueued again because the queue lost them (Redis restarted empty, flushed). */
  requeued: number;
  interrupted: boolean;
  /** With --artefacts: the artefact queue once its downloads were over. */
  artefacts?: { completed: number; failed: number; open: number };
}

/** Why a minute whose file the backfill saw came back missing, and what to do. */
export const PRESENT_BUT_MISSING =
  'a feed worker found no batch file for this minute, yet the backfill listed one in the feed directory: a worker reads another directory (a volume not mounted on its machine, another path); fix it and run the same backfill again';

/** Says how a lost queue is recovered, for the summary and the log. */
export const QUEUE_LOST_HINT =
  "its jobs ended without a trace in this backfill's store: other workers on the same Redis and queue prefix took them and wrote another store (fleet workers or ones left from an earlier run, started with another SANDTRAIL_STORE or, for SQLite, the same relative path from another directory: give every process the same store, an absolute path, or this run a queue prefix of its own), or they vanished from Redis (restarted without persistence, flushed, or evicted: run Redis with appendonly yes and maxmemory-policy noeviction); run the same backfill again";

/**
 * Writes the failures the run knows of into the batch log: a minute with no row gets a failed
 * row, a minute whose chunks were not all stored gets its missing chunks marked failed. A store
 * that refuses these writes (it is the fault) leaves the summary as the only record.
 */
export async function recordFailures(store: Store, sourceSpec: string, summary: BackfillSummary, log: Logger | undefined): Promise<void> {
  if (summary.failures.length === 0) return;
  let entries: Map<string, BatchLogEntry>;
  try {
    entries = new Map((await store.batches.get(summary.failures.map((f) => f.batch))).map((e) => [e.batch, e]));
  } catch (err) {
    log?.warn({ err: messageOf(err) }, 'the batch log could not record the failed minutes: the summary lists them');
    return;
  }
  const now = Date.now();
  // each minute on its own: a write refused by a full store may be followed by one it takes
  const refused: string[] = [];
  for (const f of summary.failures) {
    const e = entries.get(f.batch);
    try {
      if (!e) {
        await store.batches.record(failedEntry(f.batch, sourceSpec, f.reason, now, now));
      } else if (e.status !== 'pending' && e.status !== 'failed') {
        // a row an earlier run left: this run failed it
        await store.batches.record({ ...e, status: 'failed', error: f.reason, finishedAt: now });
      } else if (e.status === 'pending') {
        const stored = new Set(await store.batches.storedChunks(f.batch, e.chunks));
        for (let n = 0; n < e.chunks; n++) if (!stored.has(n)) await store.batches.chunkFailed(f.batch, n, f.reason);
      }
    } catch (err) {
      refused.push(`${f.batch}: ${messageOf(err)}`);
    }
  }
  if (refused.length > 0)
    log?.warn(
      { refused: refused.slice(0, 5), count: refused.length },
      'the batch log could not record some failed minutes: the summary lists them',
    );
}

/** The run's outcome, read back from the durable batch log and dead-letter store. */
export async function summarize(
  store: Store,
  minutes: readonly MinuteId[],
  run: {
    interrupted?: boolean;
    lost?: ReadonlySet<MinuteId>;
    requeued?: number;
    /** Why a minute's jobs failed, as the queue kept it. */
    jobFailures?: ReadonlyMap<MinuteId, string>;
    /** The store fault that stopped the run early. */
    storeFault?: string;
    /** Why the run stopped waiting for Redis. */
    redisLost?: string;
    /** Minutes whose jobs had not finished when the run stopped waiting. */
    unfinished?: ReadonlySet<MinuteId>;
    /**
     * When the run started (epoch ms). A minute it did not see finish (Redis went away before it
     * could) whose row says finished and was started since, by this run's workers, is finished as
     * its row says; a row from before the run says nothing of this run's work.
     */
    startedAt?: number;
    /** Minutes whose batch file the run found in its feed directory (none for other sources). */
    present?: ReadonlySet<MinuteId>;
  } = {},
): Promise<BackfillSummary> {
  const entries = new Map((await store.batches.get(minutes)).map((e) => [e.batch, e]));
  const batches = { ok: 0, empty: 0, missing: 0, failed: 0, pending: 0 };
  const failures: BackfillSummary['failures'] = [];
  const okMinutes: MinuteId[] = [];
  let indexed = 0;
  let rejected = 0;
  for (const m of minutes) {
    const e = entries.get(m);
    const known = run.jobFailures?.get(m);
    const finishedSince = e !== undefined && e.status !== 'pending' && run.startedAt !== undefined && e.startedAt >= run.startedAt;
    const open = run.unfinished?.has(m) === true && !finishedSince;
    if (known && e?.status !== 'failed') {
      // a job of this run failed for good: a row left by an earlier run (or none) does not say otherwise
      batches.failed += 1;
      failures.push({ batch: m, status: 'failed', reason: known });
    } else if (e?.status === 'missing' && run.present?.has(m)) {
      // a feed worker found no file where this run listed one: it reads another directory
      batches.failed += 1;
      failures.push({ batch: m, status: 'failed', reason: `SOURCE_NOT_FOUND: ${PRESENT_BUT_MISSING}` });
    } else if (e && e.status !== 'pending' && !open) {
      batches[e.status] += 1;
      if (e.status === 'failed') failures.push({ batch: m, status: 'failed', reason: e.error ?? known ?? 'failed' });
    } else {
      // no outcome, or chunks not all stored: never ok. Interrupted runs leave them pending.
      const reason = run.lost?.has(m)
        ? `QUEUE_STATE_LOST: ${QUEUE_LOST_HINT}`
        : (known ??
          (run.redisLost
            ? `REDIS_UNAVAILABLE: not finished: ${run.redisLost}`
            : run.storeFault
              ? `not finished: the run stopped on a store fault (${run.storeFault})`
              : open
                ? 'not finished when the run stopped'
                : !e
                  ? 'no outcome recorded (the feed job did not finish)'
                  : `${e.chunks} chunk(s) queued, not all stored (an index job failed or vanished)`));
      const status = run.interrupted ? 'pending' : 'failed';
      batches[status] += 1;
      failures.push({ batch: m, status, reason });
    }
    if (!e) continue;
    rejected += e.rejected;
    if (known && e.status === 'ok') {
      // the row says ok from an earlier run: what this run stored of it is not known, so not counted
      continue;
    }
    // only what is in the store counts: a whole minute once every chunk is, else its stored chunks
    if (e.status === 'ok' && !open) {
      indexed += e.accepted;
      okMinutes.push(m);
    } else if (e.chunks > 0) indexed += await store.batches.storedRecords(m, e.chunks);
  }
  const indexRejected = await store.dlq.count({ stage: 'index', batches: minutes });
  const okRejected = okMinutes.length === minutes.length ? indexRejected : await store.dlq.count({ stage: 'index', batches: okMinutes });
  return {
    batches,
    records: { indexed: indexed - okRejected, rejected: rejected + indexRejected },
    // directory sources never call the API; API sources report through the quota ledger
    api_units: 0,
    failures,
    requeued: run.requeued ?? 0,
    interrupted: run.interrupted === true,
  };
}

/**
 * The outcome when the store cannot be read back (an Elasticsearch cluster gone, a store fault on
 * the batch log itself): no minute is claimed done, each is failed (pending when interrupted)
 * with why its outcome is unknown, so the run still prints a summary and ends non-zero.
 */
export function unreadSummary(minutes: readonly MinuteId[], interrupted: boolean, err: unknown): BackfillSummary {
  const status = interrupted ? 'pending' : 'failed';
  const reason = `${errorCode(err) ?? 'SINK_UNAVAILABLE'}: the store could not be read back for this summary: ${messageOf(err)}`;
  return {
    batches: { ok: 0, empty: 0, missing: 0, failed: interrupted ? 0 : minutes.length, pending: interrupted ? minutes.length : 0 },
    records: { indexed: 0, rejected: 0 },
    api_units: 0,
    failures: minutes.map((batch) => ({ batch, status, reason })),
    requeued: 0,
    interrupted,
  };
}
