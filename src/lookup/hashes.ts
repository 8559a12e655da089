import { readFile } from 'node:fs/promises';
import { SandtrailError } from '../errors/index.js';

export type HashKind = 'md5' | 'sha1' | 'sha256';

/** A file hash as given and as sent (lower-case), or why it was refused. */
export type HashInput = { given: string; hash: string; kind: HashKind } | { given: string; refused: string };

const KIND_BY_LENGTH: Readonly<Record<number, HashKind>> = { 32: 'md5', 40: 'sha1', 64: 'sha256' };

/** Classifies one hash: MD5, SHA-1 or SHA-256 hex in any case; anything else is refused (and costs nothing). */
export function classifyHash(given: string): HashInput {
  const s = given.trim();
  const kind = KIND_BY_LENGTH[s.length];
  if (!kind || !/^[0-9a-fA-F]+$/.test(s)) {
    return { given, refused: 'not an MD5, SHA-1 or SHA-256 (32, 40 or 64 hex characters)' };
  }
  return { given, hash: s.toLowerCase(), kind };
}

/**
 * Hashes from the command line and from list files (one per line; blank lines and `#` comments
 * skipped; `-` reads stdin), classified, duplicates (after lower-casing) kept once, in order;
 * `onDuplicates` is told how many were dropped, when any were.
 */
/** The line a command prints when hashes were given more than once. */
export function duplicatesNote(dropped: number): string {
  return `sandtrail: ${dropped} hash(es) given more than once (case aside): each is asked once\n`;
}

export async function collectHashes(
  args: readonly string[],
  files: readonly string[],
  onDuplicates?: (dropped: number) => void,
): Promise<HashInput[]> {
  const raw: string[] = [...args];
  for (const file of files) {
    let text: string;
    try {
      text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
    } catch (err) {
      throw new SandtrailError('USAGE', `cannot read the hash list ${file}: ${(err as Error).message}`);
    }
    for (const line of text.split(/\r?\n/)) {
      const t = line.replace(/#.*$/, '').trim();
      if (t) raw.push(t);
    }
  }
  const seen = new Set<string>();
  const out: HashInput[] = [];
  for (const given of raw) {
    const h = classifyHash(given);
    const key = 'hash' in h ? h.hash : `refused:${given}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(h);
  }
  if (out.length < raw.length) onDuplicates?.(raw.length - out.length);
  return out;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
