import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { Logger } from '../log/index.js';
import { indexJobId, type ArtefactChoice } from '../queue/index.js';
import { failedEntry, storeIdentity, type BatchLogEntry, type Store } from '../store/index.js';
import type { HashInput } from './hashes.js';
import { lookupBatch, lookupJobId, type LookupJobData, type LookupJobResult, type LookupOutcome } from './names.js';
import type { RunBudget } from './RunBudget.js';

/** A hash's line of the summary. */
export interface HashReport {
  given: string;
  hash?: string;
  kind?: string;
  /** `invalid`: refused before any request; `skipped`: done by an earlier run (its figures shown). */
  outcome: LookupOutcome | 'invalid' | 'skipped' | 'pending';
  reports: number;
  indexed: number;
  rejected: number;
  error?: string;
}

export interface LookupSummary {
  hashes: HashReport[];
  /** Hashes per outcome. */
  counts: Partial<Record<HashReport['outcome'], number>>;
  /** Documents of this run's lookups now in the store, and reports dead-lettered. */
  documents: { indexed: number; rejected: number };
  /** API units this run's requests cost (rule 1: one per request). */
  api_units: number;
  interrupted: boolean;
  /** With --artefacts: the artefact queue once its downloads were over. */
  artefacts?: { completed: number; failed: number; open: number };
}

export interface LookupProgress {
  done: number;
  total: number;
  reports: number;
  elapsedMs: number;
}

export interface RunLookupOptions {
  queue: Queue<LookupJobData, LookupJobResult>;
  /** The index queue: a hash whose reports were fetched but not all stored is only waited for while its chunks are queued. */
  indexQueue?: Queue;
  store: Store;
  hashes: readonly HashInput[];
  /** The run's id: its shared budget counter and the jobs' tag. */
  run: string;
  prefix: string;
  budget: RunBudget;
  maxApiUnits?: number;
  /** Fetch again hashes an earlier run finished. */
  refresh?: boolean;
  artefacts?: ArtefactChoice;
  onProgress?: (p: LookupProgress) => void;
  signal?: AbortSignal;
  log: Logger;
  pollMs?: number;
  /** The pause between two polls (default: pollMs); a process's own workers end it early (ProcessParts.pause). */
  pause?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

const DONE = new Set(['ok', 'empty', 'missing']);
/** A lookup job that vanished (Redis restarted empty) is enqueued again at most this often. */
const MAX_REQUEUES = 3;

/** What a run has left to do, read from the batch log before anything is asked of the API. */
export interface LookupPlan {
  /** The batch-log entries of the valid hashes as they were before the run. */
  before: ReadonlyMap<string, BatchLogEntry>;
  /** Hashes an earlier run finished (not asked again unless refreshed): they cost nothing. */
  skipped: ReadonlySet<string>;
  /** Hashes the run waits for, in order: those it enqueues, and those in `waiting`. */
  todo: readonly string[];
  /** Hashes fetched by an interrupted run whose chunks are still queued: waited for, not fetched again. */
  waiting: ReadonlySet<string>;
}

/**
 * Splits a run's hashes into those done by an earlier run, those whose reports are fetched and
 * only being stored, and those left to fetch. The command's estimate (and so the budget guard's
 * allowance check) and the run itself go by it: a re-run is estimated, and spends, only what is
 * left.
 */
export async function planLookup(o: {
  store: Store;
  hashes: readonly HashInput[];
  refresh?: boolean;
  /** The index queue; without it a recorded hash whose chunks are not all stored counts as in flight. */
  indexQueue?: Queue;
}): Promise<LookupPlan> {
  const valid = o.hashes.filter((h): h is Extract<HashInput, { hash: string }> => 'hash' in h);
  const before = new Map((await o.store.batches.get(valid.map((h) => lookupBatch(h.hash)))).map((e) => [e.batch, e]));
  const skipped = new Set<string>();
  const todo: string[] = [];
  const waiting = new Set<string>();
  for (const h of valid) {
    const e = before.get(lookupBatch(h.hash));
    if (!o.refresh && e && DONE.has(e.status)) skipped.add(h.hash);
    else {
      todo.push(h.hash);
      // fetched by an interrupted run, its chunks still queued: wait for them instead of paying again
      if (!o.refresh && e?.status === 'pending' && (await chunksInFlight(o, e))) waiting.add(h.hash);
    }
  }
  return { before, skipped, todo, waiting };
}

/**
 * Enqueues one job per hash not done yet (deterministic job ids: a second run, or a fleet,
 * shares them), waits until every hash has an outcome in the batch log and its reports are
 * stored, and summarizes from the store: what the outcome of each hash was, however many
 * processes worked on it.
 */
export async function runLookup(o: RunLookupOptions): Promise<LookupSummary> {
  const started = Date.now();
  const valid = o.hashes.filter((h): h is Extract<HashInput, { hash: string }> => 'hash' in h);
  const { before, skipped, todo, waiting } = await planLookup({
    store: o.store,
    hashes: o.hashes,
    refresh: o.refresh,
    indexQueue: o.indexQueue,
  });
  // the store the outcomes are read from, named in every job (a realpath: read once)
  const store = storeIdentity(o.store);
  for (const hash of todo) if (!waiting.has(hash)) await enqueue(o, hash, store);
  const requeues = new Map<string, number>();
  /** Enqueues a hash again, a bounded number of times; false once it is given up (recorded failed). */
  const requeue = async (hash: string, why: string, reason?: string): Promise<boolean> => {
    const n = (requeues.get(hash) ?? 0) + 1;
    requeues.set(hash, n);
    if (n > MAX_REQUEUES) {
      await o.store.batches.record(lostEntry(hash, reason ?? why));
      return false;
    }
    o.log.warn({ hash }, `${why}: enqueued again`);
    await enqueue(o, hash, store);
    return true;
  };
  let entries = new Map<string, BatchLogEntry>();
  let interrupted = false;
  const finished = (e: BatchLogEntry | undefined): boolean => e !== undefined && (DONE.has(e.status) || e.status === 'failed');
  // the entry an earlier run left (a failure, a budget stop) is no outcome of this one: a hash
  // waits for an entry written since; a refresh, for one written by this run
  const current = (e: BatchLogEntry | undefined): BatchLogEntry | undefined =>
    e && !sameEntry(e, before.get(e.batch)) && (!o.refresh || e.finishedAt >= started) ? e : undefined;
  const fresh = (hash: string): BatchLogEntry | undefined => current(entries.get(lookupBatch(hash)));
  for (;;) {
    entries = new Map((await o.store.batches.get(todo.map(lookupBatch))).map((e) => [e.batch, e]));
    const open = todo.filter((h) => !finished(fresh(h)));
    o.onProgress?.({
      done: todo.length - open.length + skipped.size,
      total: valid.length,
      reports: todo.reduce((n, h) => n + (fresh(h)?.accepted ?? 0), 0),
      elapsedMs: Date.now() - started,
    });
    if (open.length === 0) break;
    if (o.signal?.aborted) {
      interrupted = true;
      break;
    }
    for (const hash of open) {
      const e = fresh(hash);
      // recorded, chunks still being stored; unless the queue lost them (Redis restarted empty)
      if (e && (e.status !== 'pending' || (await chunksInFlight(o, e)))) continue;
      const job = await o.queue.getJob(lookupJobId(hash));
      const state = job ? await job.getState() : 'unknown';
      if (state === 'unknown' || state === 'completed' || state === 'failed') {
        // the worker records the outcome before its job ends: read the batch log again, after the
        // job's state, or an outcome recorded since the snapshot would be taken for a lost job and
        // the hash fetched (and paid for) twice
        const [again] = await o.store.batches.get([lookupBatch(hash)]);
        const now = current(again);
        if (now) entries.set(now.batch, now);
        if (finished(now) || (now?.status === 'pending' && (await chunksInFlight(o, now)))) continue;
        // refused by a worker writing another store: enqueued again it would meet the same fleet
        if (state === 'failed' && job?.failedReason?.startsWith('CONFIG_INVALID')) {
          await o.store.batches.record(failedEntry(lookupBatch(hash), 'lookup', job.failedReason, Date.now()));
          continue;
        }
        const why = now
          ? 'its reports were fetched but their chunks are gone from the queue'
          : `the lookup job ended without an outcome (${state})`;
        await requeue(hash, why, job?.failedReason);
      }
    }
    const ms = o.pollMs ?? 250;
    if (o.pause) await o.pause(ms, o.signal);
    else await sleep(ms, undefined, { signal: o.signal }).catch(() => undefined);
  }
  const outcomes = new Map<string, BatchLogEntry>();
  for (const h of todo) {
    const e = fresh(h);
    if (e) outcomes.set(e.batch, e);
  }
  return summarize(o, skipped, before, outcomes, interrupted, await o.budget.spent());
}

async function enqueue(o: RunLookupOptions, hash: string, store: string | undefined): Promise<void> {
  const id = lookupJobId(hash);
  const previous = await o.queue.getJob(id);
  if (previous) {
    const state = await previous.getState();
    // being fetched: a worker has it in hand
    if (state === 'active') return;
    // finished, or not started yet (waiting, or delayed for a retry after an earlier run stopped):
    // replaced, so it runs under this run's budget and counts on this run's units
    try {
      await previous.remove();
    } catch {
      // taken by a worker meanwhile (locked): it is in hand
      return;
    }
  }
  const data: LookupJobData = { hash, run: o.run };
  if (o.maxApiUnits !== undefined) data.maxApiUnits = o.maxApiUnits;
  if (o.artefacts?.kinds.length) data.artefacts = o.artefacts;
  if (store) data.store = store;
  await o.queue.add('lookup', data, { jobId: id });
}

/**
 * Whether a recorded lookup's unstored chunks are still in the index queue (waiting, active,
 * delayed or failed-and-retrying). A chunk stored between the two reads is not mistaken for lost.
 */
async function chunksInFlight(o: { store: Store; indexQueue?: Queue }, e: BatchLogEntry): Promise<boolean> {
  if (!o.indexQueue) return true;
  const unstored = async (): Promise<number[]> => {
    const stored = new Set(await o.store.batches.storedChunks(e.batch, e.chunks));
    return Array.from({ length: e.chunks }, (_, n) => n).filter((n) => !stored.has(n));
  };
  const missing = await unstored();
  for (const n of missing) if (await o.indexQueue.getJob(indexJobId(e.batch, n))) return true;
  return missing.length > 0 && (await unstored()).length === 0;
}

/**
 * The same outcome as `b`, recorded before this run, by its times and status. A pending entry is
 * no outcome: its chunks, stored since, settle it (an interrupted run's fetch, waited for).
 */
function sameEntry(a: BatchLogEntry, b: BatchLogEntry | undefined): boolean {
  return b !== undefined && b.status !== 'pending' && a.status === b.status && a.startedAt === b.startedAt && a.finishedAt === b.finishedAt;
}

function lostEntry(hash: string, reason: string | undefined): BatchLogEntry {
  const now = Date.now();
  const why = `QUEUE_STATE_LOST: the lookup job ended without an outcome ${MAX_REQUEUES} times${reason ? ` (${reason})` : ''}`;
  return failedEntry(lookupBatch(hash), 'lookup', why, now, now);
}

/** The outcome a batch-log entry stands for. */
export function outcomeOf(e: BatchLogEntry | undefined): HashReport['outcome'] {
  if (!e) return 'pending';
  if (e.status === 'ok') return 'ok';
  if (e.status === 'empty') return 'no_behaviours';
  if (e.status === 'missing') return 'not_found';
  if (e.status === 'pending') return 'pending';
  if (e.error?.startsWith('GTI_FORBIDDEN')) return 'forbidden';
  if (e.error?.startsWith('BUDGET_EXCEEDED')) return 'budget';
  return 'failed';
}

function summarize(
  o: RunLookupOptions,
  skipped: ReadonlySet<string>,
  before: ReadonlyMap<string, BatchLogEntry>,
  after: ReadonlyMap<string, BatchLogEntry>,
  interrupted: boolean,
  apiUnits: number,
): LookupSummary {
  const hashes: HashReport[] = o.hashes.map((h) => {
    if (!('hash' in h)) return { given: h.given, outcome: 'invalid', reports: 0, indexed: 0, rejected: 0, error: h.refused };
    const key = lookupBatch(h.hash);
    const e = skipped.has(h.hash) ? before.get(key) : after.get(key);
    const outcome = skipped.has(h.hash) ? 'skipped' : outcomeOf(e);
    const r: HashReport = {
      given: h.given,
      hash: h.hash,
      kind: h.kind,
      outcome,
      reports: e?.lines ?? 0,
      indexed: e?.accepted ?? 0,
      rejected: e?.rejected ?? 0,
    };
    if (e?.error) r.error = e.error;
    return r;
  });
  const counts: LookupSummary['counts'] = {};
  for (const h of hashes) counts[h.outcome] = (counts[h.outcome] ?? 0) + 1;
  const mine = hashes.filter((h) => h.outcome !== 'skipped' && h.outcome !== 'invalid' && h.outcome !== 'pending');
  return {
    hashes,
    counts,
    documents: { indexed: mine.reduce((n, h) => n + h.indexed, 0), rejected: mine.reduce((n, h) => n + h.rejected, 0) },
    api_units: apiUnits,
    interrupted,
  };
}
