import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** Writes `text`, waiting for `drain` when the stream's buffer is full (backpressure). */
export async function writeText(out: Writable, text: string): Promise<void> {
  if (out.write(text)) return;
  await Promise.race([once(out, 'drain'), once(out, 'error').then(([err]) => Promise.reject(err as Error))]);
}
