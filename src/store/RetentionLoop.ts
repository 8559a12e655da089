import type { Logger } from '../log/index.js';
import { errorCode, messageOf } from '../errors/index.js';
import { retentionCutoffs, type PruneReport, type Retention, type RetentionDays } from './Retention.js';

/** The `retention.*` settings the loop follows. */
export interface RetentionLoopSettings {
  days: RetentionDays;
  bookkeepingDays?: RetentionDays | undefined;
  stepRows: number;
  intervalMs: number;
}

/** Pause between steps while expired rows remain: the index stage's writes get the store in between. */
const BETWEEN_STEPS_MS = 50;
/** How long a stop goes on stepping through a backlog (a cron backfill's whole share, within reason). */
const STOP_STEPS_MS = 10_000;

/**
 * Applies retention continuously in short steps beside the index stage: every `intervalMs` one
 * prune of at most `stepRows` rows, followed by the next step almost at once while expired rows
 * remain. A failed step is logged and tried again at the next interval (a store fault also
 * fails the stage's own writes, which report it). The caller gives a logger bound to its stage.
 * `stop()` waits for a step in flight, then, when none has run (a short backfill ends before its
 * first step is due) or the last one left expired rows, goes on stepping until none is left or
 * 10 s have passed, so a backfill run from cron applies retention as a long-lived worker does;
 * it is safe to call twice.
 */
export class RetentionLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;
  /** Whether a step has run (or been tried) in this process. */
  private stepped = false;
  /** The last step left expired rows (or failed). */
  private backlog = false;

  constructor(
    private readonly retention: Retention,
    private readonly settings: RetentionLoopSettings,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when some retention is set (otherwise `start` does nothing). */
  get enabled(): boolean {
    return this.settings.days !== 'off' || (this.settings.bookkeepingDays ?? this.settings.days) !== 'off';
  }

  start(): void {
    if (!this.enabled || this.stopped || this.timer || this.running) return;
    this.schedule(BETWEEN_STEPS_MS);
  }

  /** Stops the steps; unless `force`, first takes the steps a process that took none, or left a backlog, owes. */
  async stop(force = false): Promise<void> {
    const owing = this.enabled && !this.stopped && !force;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    if (!owing) return;
    const until = this.now() + STOP_STEPS_MS;
    while ((!this.stepped || this.backlog) && this.now() < until) {
      if (!(await this.step(true))) break;
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.step().finally(() => (this.running = undefined));
    }, ms);
    // retention never keeps a process alive on its own
    this.timer.unref();
  }

  /** One step; false when it failed (a stop then leaves the rest to the next process). */
  private async step(last = false): Promise<boolean> {
    this.stepped = true;
    let next = this.settings.intervalMs;
    try {
      const report = await this.retention.prune({ ...retentionCutoffs(this.settings, this.now()), maxRows: this.settings.stepRows });
      if (removedAny(report)) this.log.info({ ...report }, 'retention removed expired records');
      this.backlog = !report.done;
      if (!report.done) next = BETWEEN_STEPS_MS;
      return true;
    } catch (err) {
      this.log.warn(
        { code: errorCode(err), err: messageOf(err) },
        last ? 'retention step failed at stop; the next process tries again' : 'retention step failed; tried again later',
      );
      return false;
    } finally {
      this.schedule(next);
    }
  }
}

function removedAny(r: PruneReport): boolean {
  return r.behaviours + r.deadLetters + r.batches + r.watchHits + r.artefacts + r.sharedObjects + r.partitions.length > 0;
}
