import { constants } from 'node:fs';
import { access, stat, statfs } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { checkOf, type CheckResult } from './CheckResult.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** Below these, a backfill or a few memory dumps fill the disk: warn early, fail when it is imminent. */
export const DISK_WARN_BYTES = GiB;
export const DISK_FAIL_BYTES = 100 * MiB;

/** The path itself when it exists, else its closest existing ancestor (what a later mkdir -p would start from). */
export async function nearestExisting(path: string): Promise<string> {
  let p = resolve(path);
  for (;;) {
    try {
      await stat(p);
      return p;
    } catch {
      const up = dirname(p);
      if (up === p) return p;
      p = up;
    }
  }
}

/** True when the current user may write `path`. */
export async function isWritable(path: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** `1.5 GiB`, `80 MiB`. */
export function formatBytes(n: number): string {
  return n >= GiB ? `${(n / GiB).toFixed(1)} GiB` : `${Math.floor(n / MiB)} MiB`;
}

/** Bytes the current user may still write on the filesystem holding `path` (or its nearest existing ancestor). */
export async function freeBytes(path: string): Promise<{ bytes: number; on: string }> {
  const on = await nearestExisting(path);
  const s = await statfs(on);
  return { bytes: s.bavail * s.bsize, on };
}

/** Free space thresholds applied to a number of bytes; pure. */
export function judgeFreeSpace(id: string, title: string, bytes: number, on: string, what: string): CheckResult {
  const c = checkOf(id, title);
  const detail = `${formatBytes(bytes)} free on the filesystem of ${on}`;
  const fix = `free space on that filesystem, or move ${what} to a larger one`;
  if (bytes < DISK_FAIL_BYTES) return c.fail(`${detail} (under ${formatBytes(DISK_FAIL_BYTES)})`, fix);
  if (bytes < DISK_WARN_BYTES) return c.warn(`${detail} (under ${formatBytes(DISK_WARN_BYTES)})`, fix);
  return c.pass(detail);
}

/** Free disk space where `path` lives (it need not exist yet): warn under 1 GiB, fail under 100 MiB. */
export async function checkDisk(id: string, title: string, path: string, what: string): Promise<CheckResult> {
  const { bytes, on } = await freeBytes(path);
  return judgeFreeSpace(id, title, bytes, on, what);
}
