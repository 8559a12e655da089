import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { ArtefactJobData, ArtefactJobResult } from './names.js';

/** The artefact queue's state once the downloads a command waited for are over. */
export interface ArtefactCounts {
  /** Downloads finished (stored or already there), as kept by the queue (a week). */
  completed: number;
  /** Downloads given up (too large, expired link, attempts exhausted), as kept by the queue. */
  failed: number;
  /** Still queued when the wait ended early (a signal). */
  open: number;
}

/** Waits until no download is waiting, active or delayed (or the signal aborts), then counts. */
export async function waitForArtefacts(
  queue: Queue<ArtefactJobData, ArtefactJobResult>,
  signal?: AbortSignal,
  pollMs = 250,
): Promise<ArtefactCounts> {
  for (;;) {
    const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed');
    const open = (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0);
    if (open === 0 || signal?.aborted) return { completed: c.completed ?? 0, failed: c.failed ?? 0, open };
    await sleep(pollMs, undefined, { signal }).catch(() => undefined);
  }
}
