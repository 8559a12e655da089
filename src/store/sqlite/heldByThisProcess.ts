import { readdirSync, readlinkSync, realpathSync } from 'node:fs';

/**
 * Whether this process (any of its threads) has `path` open already. SQLite's locks are POSIX
 * record locks, which belong to the process: closing any other descriptor of the file drops them
 * all, and another process (a hunter's `sqlite3`) may then take itself for the last connection,
 * checkpoint and delete the -wal a writer here still appends to. Linux's /proc/self/fd tells;
 * false where it cannot (the file is then read as before).
 */
export function heldByThisProcess(path: string): boolean {
  let real: string;
  let fds: string[];
  try {
    real = realpathSync(path);
    fds = readdirSync('/proc/self/fd');
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === real) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}
