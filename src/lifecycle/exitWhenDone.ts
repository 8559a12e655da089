/** What keeps the event loop alive, counted by kind (`TCPWRAP ×2`), for a line saying why a process lingered. */
export function openResources(): string[] {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts].map(([kind, n]) => (n > 1 ? `${kind} ×${n}` : kind));
}

export interface ExitWhenDoneOptions {
  /** How long the process may stay alive once its work is over. */
  graceMs: number;
  /** The exit status (process.exitCode when absent). */
  code?: number;
  /** Told once, before the forced exit, what was still open (`openResources`). */
  onLinger?: (open: string[]) => void;
}

/**
 * Every process ends in bounded time: once its work is over, something a library left open (a
 * socket to a Redis that stopped answering, a Redis Cluster client reconnecting after a failover)
 * must not keep it alive. It exits `graceMs` later, once what it wrote to stdout and stderr is
 * written (a slow reader, `| less`, is waited for); a process with nothing left open has exited
 * by then on its own.
 */
export function exitWhenDone(o: ExitWhenDoneOptions): void {
  let told = false;
  setInterval(() => {
    if (!told) {
      told = true;
      o.onLinger?.(openResources());
    }
    if (process.stdout.writableLength !== 0 || process.stderr.writableLength !== 0) return;
    // process.exit(undefined) exits 0 on Node 20, whatever process.exitCode says: no argument then
    if (o.code === undefined) process.exit();
    process.exit(o.code);
  }, o.graceMs).unref();
}
