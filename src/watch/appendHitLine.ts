import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Appends one JSON line to a watch's file, creating its directory when missing. One `write` in
 * append mode per line, so lines from several workers writing the same local file never
 * interleave.
 */
export async function appendHitLine(file: string, json: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${json}\n`, { encoding: 'utf8', flag: 'a' });
}
