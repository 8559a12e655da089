/**
 * A command's stop: the first SIGINT/SIGTERM says `what` on stderr and aborts the returned signal
 * (the command ends what it is doing and reports), a second exits 130 at once. `dispose()` removes
 * the handlers.
 */
export function stopOnSignals(what: string): { signal: AbortSignal; dispose(): void } {
  const stop = new AbortController();
  const onSignal = (): void => {
    if (stop.signal.aborted) process.exit(130);
    process.stderr.write(`sandtrail: stopping: ${what} (a second signal stops at once)\n`);
    stop.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
