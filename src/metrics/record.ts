import { PipelineMetrics, type MetricEvent } from './PipelineMetrics.js';

let local: PipelineMetrics | undefined;
let forward: ((events: MetricEvent[]) => void) | undefined;
let pending: MetricEvent[] = [];
let timer: NodeJS.Timeout | undefined;
/** Measurements taken before this process's metrics exist, applied when they are created. */
let early: MetricEvent[] = [];
/** At most this many are kept: a process serves its metrics from its start, or never. */
const EARLY_MAX = 10_000;

/**
 * This process's metrics, created by the first call (the process serving /metrics, at its
 * start), with the measurements taken before. A process that never serves them never creates
 * them, and never loads prom-client.
 */
export function processMetrics(): PipelineMetrics {
  if (local) return local;
  const created = new PipelineMetrics();
  for (const e of early) created.apply(e);
  early = [];
  local = created;
  return created;
}

/** This process's own measurement: applied to its metrics, or kept until they exist. */
function applyHere(e: MetricEvent): void {
  if (local) local.apply(e);
  else if (early.length < EARLY_MAX) early.push(e);
}

/**
 * Records one measurement. In a worker thread that forwards (see forwardMetrics), it is batched
 * and posted to the parent, whose registry is the one /metrics serves.
 */
export function record(e: MetricEvent): void {
  if (!forward) {
    applyHere(e);
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
  for (const e of events) applyHere(e);
}
