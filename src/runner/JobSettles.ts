import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The jobs of a process's own workers ending, for a task that polls the queue for them (a
 * backfill's or a lookup's wait): its pause between two polls ends as soon as one of them ends,
 * so the command does not sit out a poll interval after its last job. Jobs of other processes (a
 * fleet) are still seen at the next poll.
 */
export class JobSettles {
  private ended = 0;
  private seen = 0;
  private wake: (() => void) | undefined;

  /** One job ended. */
  notify(): void {
    this.ended++;
    this.wake?.();
  }

  /**
   * Waits `ms`, or less: returns at once when a job ended since the previous pause returned (so
   * one that ends during a poll is not missed), or when one ends meanwhile, or on `signal`.
   */
  async pause(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.ended === this.seen && !signal?.aborted) {
      const timer = new AbortController();
      const onAbort = (): void => timer.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const ended = new Promise<void>((resolve) => (this.wake = resolve));
      try {
        await Promise.race([ended, sleep(ms, undefined, { signal: timer.signal }).catch(() => undefined)]);
      } finally {
        timer.abort();
        signal?.removeEventListener('abort', onAbort);
        this.wake = undefined;
      }
    }
    this.seen = this.ended;
  }
}
