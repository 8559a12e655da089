/** Why a benchmark run cannot produce a trustworthy report. */

/**
 * A phase that could not complete (a worker died, Redis went away, the time limit passed, the
 * feed was not read whole). The message says which phase and why; main prints it without a
 * stack and exits 1.
 */
export class BenchFailure extends Error {
  override name = 'BenchFailure';
}

/** Throws the signal's reason as a BenchFailure naming `phase` when the run was given up. */
export function throwIfAborted(signal: AbortSignal | undefined, phase: string): void {
  if (signal?.aborted) throw new BenchFailure(`phase ${phase} did not complete: ${reasonOf(signal)}`);
}

/** The abort reason as text. */
export function reasonOf(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return r instanceof Error ? r.message : String(r);
}
