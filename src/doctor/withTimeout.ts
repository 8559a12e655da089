/**
 * Runs `run` with a deadline: past `ms` its signal is aborted (so it closes its sockets) and
 * `onTimeout()` is returned instead, so doctor never hangs on an unreachable host.
 */
export async function withTimeout<T>(ms: number, run: (signal: AbortSignal) => Promise<T>, onTimeout: () => T): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(onTimeout());
    }, ms);
  });
  try {
    // the race also handles a late rejection of `run`, so an aborted probe cannot crash the process
    return await Promise.race([run(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
}
