import { appendFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { makeDirs } from '../files/index.js';

/**
 * Appends one JSON line to a watch's file, creating its directory when missing. One `write` in
 * append mode per line, so lines from several workers writing the same local file never
 * interleave.
 */
export async function appendHitLine(file: string, json: string): Promise<void> {
  await makeDirs(dirname(file));
  await appendFile(file, `${json}\n`, { encoding: 'utf8', flag: 'a' });
}
