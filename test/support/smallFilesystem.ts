import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup } from './env.js';

/** Mounts a tmpfs of `sizeMb` at a new directory under `dir`, or says why not (not root, no mount rights). */
export function smallFilesystem(dir: string, sizeMb: number): { path: string; resize(mb: number): void } | string {
  const path = join(dir, 'small');
  mkdirSync(path);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (err) {
    return `cannot mount a small tmpfs here (${(err as Error).message.split('\n')[0]})`;
  }
  cleanup(() => execFileSync('umount', ['-l', path], { stdio: 'pipe' }));
  return { path, resize: (mb) => execFileSync('mount', ['-o', `remount,size=${mb}m`, path], { stdio: 'pipe' }) };
}
