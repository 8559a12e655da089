/**
 * The signal of one exchange: its answer must begin within `headersMs`; with `bodyMs`, its body
 * then has that long in all (a download streams for minutes; an API that hangs is said in seconds).
 */
export function answerSignal(
  signal: AbortSignal | undefined,
  headersMs: number,
  bodyMs: number | undefined,
): { signal: AbortSignal; began: () => void } {
  if (bodyMs === undefined) return { signal: bounded(signal, headersMs), began: () => undefined };
  const headers = timeoutSignal(headersMs);
  // once the answer began, only the body's bound (and the caller's signal) stay
  return { signal: AbortSignal.any([bounded(signal, bodyMs), headers.signal]), began: headers.clear };
}

/**
 * The caller's signal (a worker's stop) bounded by the request timeout: a caller passing its own
 * signal must not lose the timeout, or a server that never answers holds the call for good.
 */
export function bounded(signal: AbortSignal | undefined, ms: number): AbortSignal {
  const timeout = timeoutSignal(ms).signal;
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

/**
 * A signal that aborts `ms` from now, held by a timer of its own. Not AbortSignal.timeout(): on
 * Node 20, one that only an AbortSignal.any() refers to can be garbage-collected, and then never
 * fires (a stalled answer then held a call, and a worker's stop, for good).
 */
function timeoutSignal(ms: number): { signal: AbortSignal; clear: () => void } {
  const c = new AbortController();
  const timer = setTimeout(() => c.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  timer.unref();
  return { signal: c.signal, clear: () => clearTimeout(timer) };
}
