/**
 * The API calls of this process (this thread) sent and not yet on the ledger: a process stopping
 * (a forced stop included) waits for their entries before it closes the Redis connection the
 * ledger writes through, so a call the service answered is never missing from it.
 */
let open = 0;
let waiters: (() => void)[] = [];
let stop = new AbortController();

/** Aborted when the calls under way are given up (abandonCalls); each call reads the one in force as it starts. */
export function callsStopSignal(): AbortSignal {
  return stop.signal;
}

/**
 * Gives up on the calls under way: each ends now and is recorded unanswered (its answer, if one
 * ever comes, is not waited for). Calls started afterwards are not affected.
 */
export function abandonCalls(): void {
  const given = stop;
  stop = new AbortController();
  given.abort();
}

/** How many calls await their answer or their ledger entry. */
export function callsOpen(): number {
  return open;
}

/** A call went out. */
export function callStarted(): void {
  open += 1;
}

/** A call's entry (answered or not) is written, or could not be. */
export function callSettled(): void {
  open = Math.max(0, open - 1);
  if (open > 0) return;
  const ready = waiters;
  waiters = [];
  for (const w of ready) w();
}

/** Resolves once no call of this process awaits its answer or its ledger entry. */
export function callsSettled(): Promise<void> {
  return open === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
}
