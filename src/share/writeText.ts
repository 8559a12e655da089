import type { Writable } from 'node:stream';

/** Writes `text`, waiting for `drain` when the stream's buffer is full (backpressure). */
export async function writeText(out: Writable, text: string): Promise<void> {
  if (out.write(text)) return;
  // both listeners go once either fires: a long export waits for drain many thousand times
  await new Promise<void>((resolve, reject) => {
    const onDrain = (): void => {
      out.off('error', onError);
      resolve();
    };
    const onError = (err: Error): void => {
      out.off('drain', onDrain);
      reject(err);
    };
    out.once('drain', onDrain);
    out.once('error', onError);
  });
}
