import { open, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { checkDisk, isWritable, nearestExisting } from './checkDisk.js';
import { checkOf, type CheckResult } from './CheckResult.js';
import { checkSqliteIntegrity } from './checkSqliteIntegrity.js';

const MAGIC = 'SQLite format 3\0';

/** Is a file there, and how big; undefined when absent. */
async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch {
    return undefined;
  }
}

/**
 * The SQLite file can be written: an existing file and its directory (WAL mode creates `-wal`
 * and `-shm` files beside it), or, before the first command, the directory that command will
 * create it in (or the nearest existing ancestor it will `mkdir -p` from). Nothing is created.
 */
async function checkWritable(file: string, exists: boolean): Promise<CheckResult> {
  const c = checkOf('store', 'Store (SQLite)');
  const dir = dirname(file);
  const owner = 'run sandtrail as the user owning it, or choose another file with --store sqlite:FILE';
  if (exists) {
    if (!(await isWritable(file))) return c.fail(`${file} is not writable`, owner);
    if (!(await isWritable(dir))) return c.fail(`${dir} is not writable: SQLite cannot create ${file}-wal beside the database`, owner);
    return c.pass(`${file} is writable`);
  }
  // a command creates the store's file, never its directory: the directory must be there already
  const base = await nearestExisting(dir);
  if (base !== resolve(dir))
    return c.fail(`${file} cannot be created: its directory ${dir} does not exist`, `mkdir -p ${dir}, or choose another --store`);
  if (!(await stat(dir)).isDirectory()) return c.fail(`${file} cannot be created: ${dir} is not a directory`, 'choose another --store');
  if (!(await isWritable(dir))) return c.fail(`${file} does not exist and ${dir} is not writable: it cannot be created`, owner);
  return c.pass(`${file} does not exist yet; the first command creates it`);
}

/**
 * Journal mode read from the file header (bytes 18-19 are 2 in WAL mode), so checking opens no
 * connection and leaves no `-shm` file behind.
 */
async function checkJournal(file: string, size: number | undefined): Promise<CheckResult> {
  const c = checkOf('store.journal', 'SQLite journal mode');
  if (size === undefined) return c.pass('the database will be created in WAL mode');
  if (size === 0) return c.pass('empty file: the first command initializes it in WAL mode');
  const header = Buffer.alloc(100);
  const fh = await open(file, 'r');
  try {
    await fh.read(header, 0, 100, 0);
  } finally {
    await fh.close();
  }
  if (header.toString('latin1', 0, 16) !== MAGIC) {
    return c.fail(`${file} is not a SQLite database`, 'point --store sqlite:FILE at a sandtrail database or a new path');
  }
  if (header[18] === 2 && header[19] === 2) return c.pass('WAL');
  return c.warn(
    'rollback journal, not WAL: readers block the writers',
    'run any sandtrail command on it (stores switch to WAL when opened), or `sqlite3 FILE "PRAGMA journal_mode=WAL"`',
  );
}

/** The SQLite store's checks: writable, WAL, intact (an existing database only), free disk space. */
export async function checkSqlite(file: string, integrityTimeoutMs?: number): Promise<CheckResult[]> {
  if ((await stat(file).catch(() => undefined))?.isDirectory()) {
    return [
      checkOf('store', 'Store (SQLite)').fail(
        `${file} is a directory, not a store file`,
        'give a file in it: --store sqlite:DIR/sandtrail.db',
      ),
    ];
  }
  const size = await sizeOf(file);
  const journal = await checkJournal(file, size);
  const intact = size && journal.status !== 'fail' ? [await checkSqliteIntegrity(file, integrityTimeoutMs)] : [];
  return [
    await checkWritable(file, size !== undefined),
    journal,
    ...intact,
    await checkDisk('store.disk', 'Store disk space', file, 'the database (--store sqlite:FILE)'),
  ];
}
