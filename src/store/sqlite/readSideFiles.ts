import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/** Whether a store has neither -wal nor -shm beside it: a read about to open it will leave them (SQLite makes them). */
export function sideFilesAbsent(path: string): boolean {
  return !existsSync(`${path}-wal`) && !existsSync(`${path}-shm`);
}

/**
 * Removes the empty -wal and the -shm a read-only connection left, as SQLite does when the last
 * connection that may write closes: through such a connection, so SQLite decides, under its own
 * locks, whether another process still uses them (then they stay). Best effort: a read has
 * already answered.
 */
export function removeReadSideFiles(path: string): void {
  try {
    if (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size !== 0) return;
    accessSync(path, constants.W_OK);
    accessSync(dirname(path), constants.W_OK);
    const db = new BetterSqlite3(path, { fileMustExist: true, timeout: 100 });
    try {
      db.prepare('SELECT 1 FROM sqlite_master LIMIT 1').get();
    } finally {
      db.close();
    }
  } catch {
    // left as they are: the next writer of the store uses or removes them
  }
}
