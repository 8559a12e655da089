/** Calls `warn` every `everyMs` while the state it is shown stays the same (never when `everyMs` is unset). */
export function idleWatch(
  everyMs: number | undefined,
  warn: (idleS: number, done: number) => void,
): { check(state: string, done: number): void } {
  let last = '';
  let since = Date.now();
  let warned = since;
  return {
    check(state, done) {
      const now = Date.now();
      if (state !== last) [last, since, warned] = [state, now, now];
      else if (everyMs !== undefined && now - warned >= everyMs) {
        warned = now;
        warn(Math.round((now - since) / 1000), done);
      }
    },
  };
}
