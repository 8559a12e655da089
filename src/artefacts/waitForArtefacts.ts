import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { RedisClient } from '../queue/index.js';
import { artefactRunKey, type ArtefactJobData, type ArtefactJobResult } from './names.js';

/** The downloads a command run asked for, once they are over. */
export interface ArtefactCounts {
  /** Downloads of this run finished (stored, or already there). */
  completed: number;
  /** Downloads of this run given up (too large, expired link, attempts exhausted). */
  failed: number;
  /** Downloads still queued (of any run) when the wait ended early (a signal). */
  open: number;
}

/**
 * Waits until no download is waiting, active or delayed (or the signal aborts), then counts the
 * downloads of `run` that finished (the artefact workers count them per run as they end).
 */
export async function waitForArtefacts(
  queue: Queue<ArtefactJobData, ArtefactJobResult>,
  counted: { redis: RedisClient; prefix: string; run: string },
  signal?: AbortSignal,
  pollMs = 250,
): Promise<ArtefactCounts> {
  for (;;) {
    const c = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
    const open = (c.waiting ?? 0) + (c.active ?? 0) + (c.delayed ?? 0) + (c.prioritized ?? 0);
    if (open === 0 || signal?.aborted) {
      const counts = await counted.redis.hgetall(artefactRunKey(counted.prefix, counted.run));
      return { completed: Number(counts.completed ?? 0), failed: Number(counts.failed ?? 0), open };
    }
    await sleep(pollMs, undefined, { signal }).catch(() => undefined);
  }
}
