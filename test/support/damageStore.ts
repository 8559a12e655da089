import { closeSync, openSync, writeSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';

/**
 * Writes garbage over every page of the pivot rows' tables and indexes of a SQLite store, as a crash
 * on a bad disk leaves it; the write-ahead log is folded in first, so the pages are read from the
 * file. The behaviours, dead letters and batch log stay readable.
 */
export function damagePivotPages(file: string): void {
  const db = new BetterSqlite3(file);
  let pages: number[];
  let pageSize: number;
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    pageSize = db.pragma('page_size', { simple: true }) as number;
    // every day's pivot rows and their groups index
    pages = (db.prepare("SELECT pageno FROM dbstat WHERE name GLOB 'pivots_*'").all() as { pageno: number }[]).map((r) => r.pageno);
  } finally {
    db.close();
  }
  if (pages.length < 2) throw new Error(`${file}: too few pivot pages to damage (${pages.length})`);
  const fd = openSync(file, 'r+');
  try {
    for (const p of pages) writeSync(fd, Buffer.alloc(pageSize, 0x5a), 0, pageSize, (p - 1) * pageSize);
  } finally {
    closeSync(fd);
  }
}
