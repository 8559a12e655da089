import type { Logger } from '../log/index.js';
import { storeIdentity, type Store, type BatchLogEntry } from '../store/index.js';
import type { Queues } from './createQueues.js';
import type { FeedCursor } from './cursor.js';
import { feedJobId, indexJobId, type ArtefactChoice } from './names.js';
import { addMinutes, minuteRange, minuteToMs, msToMinute, type MinuteId } from '../minute/index.js';

/** The feed keeps batches this long; older minutes cannot be fetched any more. */
export const RETENTION_MS = 7 * 24 * 3600 * 1000;
const MAX_PER_TICK = 600;
/** Batch-log entries read to resume after Redis lost the scheduler's pointers (a few days of minutes). */
const RESUME_WINDOW = 5000;
/** How often a running scheduler says again, in the batch log, that it runs on this source (bookkeeping expires). */
const MARK_EVERY_MS = 3_600_000;
/** The longest wait between two runs again of a failed minute. */
const RETRY_MAX_WAIT_MS = 6 * 3_600_000;
/** Minutes past the cursor a tick looks at for failed ones to run again (a day). */
const RETRY_WINDOW = 1440;
/** Job states of a minute no worker holds: it may be enqueued again. */
const SETTLED_STATES: ReadonlySet<string> = new Set(['completed', 'failed', 'unknown']);

export interface SchedulerOptions {
  queues: Queues;
  store: Store;
  prefix: string;
  sourceSpec: string;
  log: Logger;
  /** Minutes become available about this long after they end. */
  lagMs: number;
  tickMs: number;
  /** A failed minute is run again this long after it failed (live.retryFailedMs); the cursor waits before it. */
  retryFailedMs: number;
  /** Where to begin when no cursor is saved (default: now − lag). */
  start?: FeedCursor;
  /** Artefacts to download through the feed lines' links (every minute's job carries the choice). */
  artefacts?: ArtefactChoice;
  now?: () => number;
}

/** What `status` reads: both pointers live in Redis beside the queues. */
export interface SchedulerPointers {
  /** Newest minute enqueued. */
  scheduled: MinuteId | null;
  /** Newest minute such that it and every minute before it since the start is fully processed. */
  cursor: MinuteId | null;
}

/** The batch-log key of a live scheduler's mark on a source (Scheduler.mark). */
export const liveMark = (sourceSpec: string): string => `live-${sourceSpec}`;

/** Redis keys of the scheduler's pointers. */
export const pointerKeys = (prefix: string): { scheduled: string; cursor: string; skip: string; retries: string } => ({
  retries: `${prefix}:live:retries`,
  scheduled: `${prefix}:live:scheduled`,
  cursor: `${prefix}:live:cursor`,
  skip: `${prefix}:live:skip`,
});

/**
 * Live mode: enqueues every minute as soon as it can be published, oldest first, from a cursor
 * saved in Redis, so a restart after hours down catches up (within the feed's retention). The
 * cursor only moves past a minute once it is stored whole (or known missing); a minute that failed
 * is run again every retryFailedMs until it succeeds, and is given up only when it leaves the
 * feed's retention.
 */
export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** The store its jobs name (storeIdentity; '' for one not compared), read at the first job. */
  private storeId: string | undefined;
  private readonly keys: ReturnType<typeof pointerKeys>;
  private readonly now: () => number;
  /** Whether the --start a saved cursor overrides was said. */
  private startSaid = false;
  /** When this scheduler last wrote its mark in the batch log (liveMark). */
  private markedAt = -Infinity;

  constructor(private readonly o: SchedulerOptions) {
    this.keys = pointerKeys(o.prefix);
    this.now = o.now ?? Date.now;
  }

  async start(): Promise<void> {
    if (this.timer) return;
    await this.tick();
    this.timer = setInterval(() => void this.tick(), this.o.tickMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One scheduling pass (exposed for tests): enqueue what is publishable, then advance the cursor. */
  tick(): Promise<void> {
    this.running ??= this.pass()
      .catch((err: unknown) => this.o.log.error({ err: (err as Error).message }, 'scheduler tick failed'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** What every feed job of this scheduler carries beside its minute. */
  private extra(): { artefacts?: ArtefactChoice; store?: string } {
    const store = (this.storeId ??= storeIdentity(this.o.store) ?? '');
    return { ...(this.o.artefacts?.kinds.length ? { artefacts: this.o.artefacts } : {}), ...(store ? { store } : {}) };
  }

  private async pass(): Promise<void> {
    const redis = this.o.queues.connection;
    const newest = msToMinute(this.now() - this.o.lagMs - 60_000);
    const floor = msToMinute(this.now() - RETENTION_MS + 10 * 60_000);
    const saved = await redis.get(this.keys.scheduled);
    let next: MinuteId;
    const resume = saved ? undefined : await this.resumeFromBatchLog();
    if (saved) {
      next = addMinutes(saved, 1);
      if (this.o.start && !this.startSaid) {
        // said once: a --start that does nothing looks like one that worked
        this.startSaid = true;
        this.o.log.warn(
          { start: this.o.start.minute, scheduledThrough: saved },
          '--start is ignored: this queue prefix has a live cursor saved in Redis, which the scheduler goes on from (a new start needs another queue prefix)',
        );
      }
    } else if (resume && (!this.o.start || resume.next > this.o.start.minute)) {
      // Redis lost the pointers (restarted empty, flushed) but the store remembers: go on from there,
      // and walk the cursor again over every minute not known to be complete
      this.o.log.warn(
        { resumeAt: resume.next, cursor: resume.cursor },
        'no scheduler state in Redis but the batch log has history: queue state was lost (run Redis with appendonly yes); resuming from the batch log',
      );
      next = resume.next;
      await redis.set(this.keys.cursor, resume.cursor);
      // what the batch log holds counts as scheduled: the next tick goes on from the pointers (no
      // second warning), and the cursor walk checks those minutes even before a new one is due
      await redis.set(this.keys.scheduled, addMinutes(resume.next, -1));
    } else {
      // this scheduler saves the cursor from its own --start: the next ticks find it saved, and say nothing
      this.startSaid = true;
      next = this.o.start?.minute ?? newest;
      if (this.o.start?.consumed) await redis.hset(this.keys.skip, this.o.start.minute, String(this.o.start.consumed));
      await redis.set(this.keys.cursor, addMinutes(next, -1), 'NX');
    }
    if (next < floor) {
      this.o.log.warn({ from: next, to: floor }, 'cursor older than the feed retention: minutes before the retention floor are skipped');
      next = floor;
      await redis.set(this.keys.cursor, addMinutes(floor, -1));
    }
    if (next <= newest) {
      const behind = (minuteToMs(newest) - minuteToMs(next)) / 60_000 + 1;
      if (behind > 1) this.o.log.info({ from: next, minutes: behind }, `catching up ${behind} minutes from ${next}, oldest first`);
      const last = behind > MAX_PER_TICK ? addMinutes(next, MAX_PER_TICK - 1) : newest;
      const minutes = [...minuteRange(next, last)];
      const skips = await redis.hgetall(this.keys.skip);
      await this.o.queues.feed.addBulk(
        minutes.map((batch) => ({
          name: 'batch',
          data: { batch, source: this.o.sourceSpec, ...this.extra(), ...(skips[batch] ? { skipLines: Number(skips[batch]) } : {}) },
          opts: { jobId: feedJobId(batch) },
        })),
      );
      await redis.set(this.keys.scheduled, last);
    }
    await this.advanceCursor();
    await this.mark();
  }

  /**
   * The batch log's row saying a live scheduler runs on this source: what tells a Redis that lost
   * the pointers (resume from the batch log) from a first `run` on a store of backfills (start at
   * now − lag). Written again every hour, so bookkeeping retention never takes it.
   */
  private async mark(): Promise<void> {
    const now = this.now();
    if (now - this.markedAt < MARK_EVERY_MS) return;
    const none = { lines: 0, accepted: 0, rejected: 0, chunks: 0, bytesDecoded: 0, error: null };
    await this.o.store.batches.record({
      batch: liveMark(this.o.sourceSpec),
      source: this.o.sourceSpec,
      status: 'ok',
      ...none,
      startedAt: now,
      finishedAt: now,
    });
    this.markedAt = now;
  }

  private async advanceCursor(): Promise<void> {
    const redis = this.o.queues.connection;
    const [cursor, scheduled] = await Promise.all([redis.get(this.keys.cursor), redis.get(this.keys.scheduled)]);
    if (!cursor || !scheduled || cursor >= scheduled) return;
    const floor = msToMinute(this.now() - RETENTION_MS + 10 * 60_000);
    const window = [...minuteRange(addMinutes(cursor, 1), scheduled)].slice(0, RETRY_WINDOW);
    const entries = new Map((await this.o.store.batches.get(window)).map((e) => [e.batch, e]));
    let c = cursor;
    let walking = true;
    for (const m of window) {
      const entry = entries.get(m);
      if (entry?.status === 'failed') {
        // never passed while it can still be fetched: run again once its wait is over
        if (m < floor) {
          this.o.log.error({ batch: m, error: entry.error }, 'a failed minute left the feed retention before it could be stored: given up');
          if (walking) c = m;
          continue;
        }
        walking = false;
        await this.retryFailed(m, entry);
        continue;
      }
      if (!walking) continue;
      const state = await this.o.queues.feed.getJobState(feedJobId(m));
      // complete: a final outcome in the batch log (`pending` is not: chunks are still on their way)
      if (entry && entry.status !== 'pending' && SETTLED_STATES.has(state)) {
        c = m;
        continue;
      }
      walking = false;
      if (await this.isLost(m, entry, state)) {
        this.o.log.warn({ batch: m }, 'queue state lost for this minute (Redis restarted empty or flushed?): enqueued again');
        await this.enqueueAgain(m);
      }
    }
    if (c !== cursor) {
      await redis.set(this.keys.cursor, c);
      // the runs again of the minutes now behind the cursor are over
      const passed = window.slice(0, window.indexOf(c) + 1);
      if (passed.length) await redis.hdel(this.keys.retries, ...passed);
    }
  }

  /** A failed minute is enqueued afresh once retryFailedMs has passed since it failed, unless a worker holds it. */
  private async retryFailed(batch: MinuteId, entry: BatchLogEntry): Promise<void> {
    const redis = this.o.queues.connection;
    // each run again waits twice as long as the one before (at most RETRY_MAX_WAIT_MS): a minute
    // that always fails (a file that never decodes) is not downloaded again every few minutes for a week
    const runs = Number((await redis.hget(this.keys.retries, batch)) ?? 0);
    const waitMs = Math.min(this.o.retryFailedMs * 2 ** runs, Math.max(this.o.retryFailedMs, RETRY_MAX_WAIT_MS));
    if (this.now() - entry.finishedAt < waitMs) return;
    if (!SETTLED_STATES.has(await this.o.queues.feed.getJobState(feedJobId(batch)))) return;
    this.o.log.warn(
      { batch, error: entry.error, run: runs + 1 },
      'running a failed minute again; the cursor waits before it until it is stored',
    );
    await redis.hincrby(this.keys.retries, batch, 1);
    await this.enqueueAgain(batch);
  }

  /** The minute's feed job, removed whatever its state and added anew (its tries start again). */
  private async enqueueAgain(batch: MinuteId): Promise<void> {
    await (await this.o.queues.feed.getJob(feedJobId(batch)))?.remove();
    await this.o.queues.feed.add('batch', { batch, source: this.o.sourceSpec, ...this.extra() }, { jobId: feedJobId(batch) });
  }

  /** True when nothing in the queue will ever finish this minute: its jobs vanished before its work was stored. */
  private async isLost(batch: MinuteId, entry: BatchLogEntry | undefined, state: string): Promise<boolean> {
    if (state === 'unknown') return !entry || entry.status === 'pending';
    if (state !== 'completed' || !entry || entry.status !== 'pending') return false;
    const ids = Array.from({ length: entry.chunks }, (_, n) => indexJobId(batch, n));
    const states = await Promise.all(ids.map((id) => this.o.queues.index.getJobState(id)));
    // a failed index job is a real failure (its batch stays pending, status shows it), not a loss
    if (states.some((st) => st !== 'unknown')) return false;
    const stored = await this.o.store.batches.storedChunks(batch, entry.chunks);
    return stored.length < entry.chunks;
  }

  /** Where to go on when Redis has no pointers: after the newest minute of the batch log, cursor before the first incomplete one. */
  private async resumeFromBatchLog(): Promise<{ next: MinuteId; cursor: MinuteId } | undefined> {
    // minutes of backfills alone: no scheduler ran here, so nothing was lost; a first run starts at now − lag
    if ((await this.o.store.batches.get([liveMark(this.o.sourceSpec)])).length === 0) return undefined;
    const entries = (await this.o.store.batches.minutes(RESUME_WINDOW)).filter((e) => e.source === this.o.sourceSpec);
    if (entries.length === 0) return undefined;
    const byBatch = new Map(entries.map((e) => [e.batch, e]));
    const sorted = [...byBatch.keys()].sort();
    const oldest = sorted[0] as MinuteId;
    const newest = sorted[sorted.length - 1] as MinuteId;
    let cursor = addMinutes(oldest, -1);
    for (const m of minuteRange(oldest, newest)) {
      const e = byBatch.get(m);
      if (!e || e.status === 'pending') break;
      cursor = m;
    }
    return { next: addMinutes(newest, 1), cursor };
  }

  /** Both pointers, for status. */
  static async pointers(queues: Queues, prefix: string): Promise<SchedulerPointers> {
    const k = pointerKeys(prefix);
    const [scheduled, cursor] = await Promise.all([queues.connection.get(k.scheduled), queues.connection.get(k.cursor)]);
    return { scheduled, cursor };
  }
}
