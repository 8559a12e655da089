import { join, resolve } from 'node:path';
import { EXTENSION, type ArtefactKind } from './kinds.js';

/**
 * Where an artefact lives: `<dir>/<sha256[0:2]>/<sha256>/<sandbox>/<kind>.<ext>`, `<sandbox>` the
 * behaviour id's part after the file's SHA-256 as given (a private analysis's `-<timestamp>`
 * included: two analyses of one file by one sandbox keep their own files). It becomes one safe
 * path segment (spaces and separators replaced), so no report can write outside its file's
 * directory.
 */
export function blobPath(dir: string, behaviourId: string, kind: ArtefactKind): string {
  const sha = behaviourId.slice(0, 64).toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha) || behaviourId[64] !== '_') throw new RangeError(`not a behaviour id: ${behaviourId}`);
  return join(resolve(dir), sha.slice(0, 2), sha, safeSegment(behaviourId.slice(65)), `${kind}.${EXTENSION[kind]}`);
}

function safeSegment(name: string): string {
  const s = name
    .normalize('NFKC')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 100);
  return s === '' ? '_' : s;
}
