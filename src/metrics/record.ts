import { PipelineMetrics, type MetricEvent } from './PipelineMetrics.js';

let local: PipelineMetrics | undefined;
let forward: ((events: MetricEvent[]) => void) | undefined;
let pending: MetricEvent[] = [];
let timer: NodeJS.Timeout | undefined;

/** This process's metrics (created on first use: a process that never serves them pays little). */
export function processMetrics(): PipelineMetrics {
  return (local ??= new PipelineMetrics());
}

/**
 * Records one measurement. In a worker thread that forwards (see forwardMetrics), it is batched
 * and posted to the parent, whose registry is the one /metrics serves.
 */
export function record(e: MetricEvent): void {
  if (!forward) {
    processMetrics().apply(e);
    return;
  }
  pending.push(e);
  timer ??= setTimeout(flushMetrics, 200);
  timer.unref?.();
}

/** Sends what a forwarding thread has buffered (also called before the thread stops). */
export function flushMetrics(): void {
  if (timer) clearTimeout(timer);
  timer = undefined;
  if (!forward || pending.length === 0) return;
  const out = pending;
  pending = [];
  forward(out);
}

/** Makes this thread forward its measurements to `post` (the parent applies them with applyMetrics). */
export function forwardMetrics(post: (events: MetricEvent[]) => void): void {
  forward = post;
}

/** Applies measurements forwarded by a worker thread. */
export function applyMetrics(events: readonly MetricEvent[]): void {
  const m = processMetrics();
  for (const e of events) m.apply(e);
}
