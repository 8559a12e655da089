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

/**
 * Applies retention continuously in short steps beside the index stage: every `intervalMs` one
 * prune of at most `stepRows` rows, followed by the next step almost at once while expired rows
 * remain. A failed step is logged and tried again at the next interval (a store fault also
 * fails the stage's own writes, which report it). The caller gives a logger bound to its stage.
 * `stop()` waits for a step in flight, takes one step first when none has run (a short backfill
 * ends before its first step is due, and would otherwise never apply retention), and is safe to
 * call twice.
 */
export class RetentionLoop {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Whether a step has run (or been tried) in this process. */
  private stepped = false;

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

  /** Stops the steps; unless `force`, first takes the one step a process that took none owes. */
  async stop(force = false): Promise<void> {
    const owed = this.enabled && !this.stopped && !this.stepped && !force;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    if (owed && !this.stepped) await this.step(true);
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

  private async step(last = false): Promise<void> {
    this.stepped = true;
    let next = this.settings.intervalMs;
    try {
      const report = await this.retention.prune({ ...retentionCutoffs(this.settings, this.now()), maxRows: this.settings.stepRows });
      if (removedAny(report)) this.log.info({ ...report }, 'retention removed expired records');
      if (!report.done) next = BETWEEN_STEPS_MS;
    } catch (err) {
      this.log.warn(
        { code: errorCode(err), err: messageOf(err) },
        last ? 'retention step failed at stop; the next process tries again' : 'retention step failed; tried again later',
      );
    }
    this.schedule(next);
  }
}

function removedAny(r: PruneReport): boolean {
  return r.behaviours + r.deadLetters + r.batches + r.watchHits + r.artefacts + r.partitions.length > 0;
}
