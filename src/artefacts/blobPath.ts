import { join, resolve } from 'node:path';
import { EXTENSION, type ArtefactKind } from './kinds.js';

/**
 * Where an artefact lives: `<dir>/<sha256[0:2]>/<sha256>/<sandbox>/<kind>.<ext>`. The sandbox
 * name becomes one safe path segment (spaces and separators replaced), so no report can write
 * outside its file's directory.
 */
export function blobPath(dir: string, sha256: string, sandbox: string, kind: ArtefactKind): string {
  const sha = sha256.toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(sha)) throw new RangeError(`not a SHA-256: ${sha256}`);
  return join(resolve(dir), sha.slice(0, 2), sha, safeSegment(sandbox), `${kind}.${EXTENSION[kind]}`);
}

function safeSegment(name: string): string {
  const s = name
    .normalize('NFKC')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 100);
  return s === '' ? '_' : s;
}
