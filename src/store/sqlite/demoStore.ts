import { statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { fileHead, SQLITE_HEADER } from './openForReads.js';

/** The SQLite header's application id (offset 68) of a store `sandtrail demo` wrote: "sdem". */
const DEMO_APPLICATION_ID = 0x7364656d;

/** What a file is to the demo, which replaces only a store it wrote itself. */
export type DemoStoreFile = 'missing' | 'empty' | 'demo' | 'sqlite' | 'other';

/**
 * Reads the header of `path` without opening it as a database (a damaged or foreign file is
 * never touched): absent, empty, a store the demo marked, another SQLite file, or anything else.
 */
export function demoStoreFile(path: string): DemoStoreFile {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) return 'other';
    size = st.size;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'other';
  }
  if (size === 0) return 'empty';
  let header: Buffer;
  try {
    header = fileHead(path, 100);
  } catch {
    return 'other';
  }
  if (header.length < 100 || !header.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER)) return 'other';
  return header.readUInt32BE(68) === DEMO_APPLICATION_ID ? 'demo' : 'sqlite';
}

/** Marks the store at `path` as the demo's: a later demo may replace it. */
export function markDemoStore(path: string): void {
  const db = new BetterSqlite3(path, { fileMustExist: true });
  try {
    db.pragma(`application_id = ${DEMO_APPLICATION_ID}`);
  } finally {
    db.close();
  }
}
