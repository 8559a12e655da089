import { accessSync, closeSync, constants, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SandtrailError } from '../../errors/index.js';
import { heldByThisProcess } from './heldByThisProcess.js';
import { SqliteArtefactLog } from './SqliteArtefactLog.js';
import { SqliteBatchLog } from './SqliteBatchLog.js';
import { SqliteDeadLetterStore } from './SqliteDeadLetterStore.js';
import { SqlitePrivateFileStore } from './SqlitePrivateFileStore.js';
import { SqliteSink } from './SqliteSink.js';
import { SqliteWatchStore } from './SqliteWatchStore.js';
import { SqliteCollectionStore } from './SqliteCollectionStore.js';

/** How a command uses the store file: `readOnly` never creates or writes it; `mustExist` writes an existing one only. */
export interface StoreFileAccess {
  readOnly?: boolean;
  mustExist?: boolean;
}

/** The 16 bytes every SQLite database file starts with. */
export const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** The first `n` bytes of a file (fewer when it is shorter); the file system's error is thrown as it is. */
export function fileHead(path: string, n: number): Buffer {
  const head = Buffer.alloc(n);
  const fd = openSync(path, 'r');
  try {
    return head.subarray(0, readSync(fd, head, 0, n, 0));
  } finally {
    closeSync(fd);
  }
}

/** The store's file as `--store` names it, for messages. */
const specOf = (path: string): string => `sqlite:${path}`;

/**
 * Refuses, before SQLite is asked, a store path that cannot be a store: a directory, a file that
 * is not a SQLite database, a missing file for a command that reads (or changes) an existing
 * store, and a missing directory (a write creates the file, never the directories above it: a
 * mistyped path must not become an empty store somewhere).
 */
export function checkStoreFile(path: string, o: StoreFileAccess): void {
  let size: number;
  try {
    const st = statSync(path);
    if (st.isDirectory()) {
      throw new SandtrailError('NOT_FOUND', `${path} is a directory, not a SQLite store file: check --store (${specOf(path)})`);
    }
    size = st.size;
  } catch (err) {
    if (err instanceof SandtrailError) throw err;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw unreadable(path, err);
    if (o.readOnly || o.mustExist) {
      throw new SandtrailError('NOT_FOUND', `no store at ${path} (${specOf(path)}): run a backfill first or check --store`);
    }
    const dir = dirname(path);
    let dirInfo;
    try {
      dirInfo = statSync(dir);
    } catch {
      throw new SandtrailError(
        'NOT_FOUND',
        `cannot create the store ${path}: its directory ${dir} does not exist (create it, or check --store)`,
      );
    }
    if (!dirInfo.isDirectory()) throw new SandtrailError('NOT_FOUND', `cannot create the store ${path}: ${dir} is not a directory`);
    return;
  }
  // an empty file is a database SQLite has not written yet: a write may start it
  if (size === 0) return;
  // checked when this process opened it; reading it again through a descriptor of its own would
  // drop the open connections' locks when that descriptor closes
  if (heldByThisProcess(path)) return;
  let head: Buffer;
  try {
    head = fileHead(path, SQLITE_HEADER.length);
  } catch (err) {
    throw unreadable(path, err);
  }
  if (!head.equals(SQLITE_HEADER)) {
    throw new SandtrailError('STORE_DAMAGED', `${path} is not a SQLite database: check --store (${specOf(path)})`, { file: path });
  }
}

function unreadable(path: string, err: unknown): SandtrailError {
  const code = (err as NodeJS.ErrnoException).code;
  const why = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (err as Error).message;
  return new SandtrailError('STORE_READONLY', `cannot read the store ${path}: ${why}`, { file: path }, { cause: err });
}

/** Tables and views (with their columns), views and indexes of a database. */
interface Shape {
  tables: Map<string, Set<string>>;
  views: Set<string>;
  indexes: Set<string>;
}

function shapeOf(db: BetterSqlite3.Database): Shape {
  const rows = db
    .prepare("SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'index') AND name NOT LIKE 'sqlite_%'")
    .all() as {
    type: string;
    name: string;
  }[];
  const tables = new Map<string, Set<string>>();
  const views = new Set<string>();
  const indexes = new Set<string>();
  for (const r of rows) {
    if (r.type === 'index') indexes.add(r.name);
    else {
      if (r.type === 'view') views.add(r.name);
      const cols = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(r.name) as string[];
      tables.set(r.name, new Set(cols));
    }
  }
  return { tables, views, indexes };
}

let current: { shape: Shape; ddl: Map<string, string> } | undefined;

/** The schema this version writes: the store's parts set up on an empty in-memory database. */
function currentSchema(): { shape: Shape; ddl: Map<string, string> } {
  if (current) return current;
  const mem = new BetterSqlite3(':memory:');
  try {
    new SqliteSink(mem);
    new SqliteDeadLetterStore(mem);
    new SqliteBatchLog(mem);
    new SqlitePrivateFileStore(mem);
    new SqliteArtefactLog(mem);
    new SqliteWatchStore(mem);
    new SqliteCollectionStore(mem);
    const ddl = new Map(
      (mem.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all() as { name: string; sql: string }[]).map((r) => [
        r.name,
        r.sql,
      ]),
    );
    current = { shape: shapeOf(mem), ddl };
    return current;
  } finally {
    mem.close();
  }
}

/** What a store lacks of the current schema. */
function lacks(have: Shape): { tables: string[]; columns: string[]; indexes: string[] } {
  const want = currentSchema().shape;
  const tables: string[] = [];
  const columns: string[] = [];
  for (const [table, cols] of want.tables) {
    const got = have.tables.get(table);
    if (!got) tables.push(table);
    else for (const c of cols) if (!got.has(c)) columns.push(`${table}.${c}`);
  }
  return { tables, columns, indexes: [...want.indexes].filter((i) => !have.indexes.has(i)) };
}

/** Whether this process may write the file and create the -wal and -shm files beside it. */
function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    accessSync(dirname(path), constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * A store this large is not read into memory when SQLite cannot open it in place (a WAL store in
 * a directory the reader cannot write): the reader is told how to make it readable instead.
 */
const SNAPSHOT_MAX_BYTES = 512 * 1024 ** 2;

/**
 * SQLite reads a WAL-mode file through its -shm file, which it creates beside it. In a directory
 * the reader may not write, and with no -shm left there, it cannot open the file at all
 * (SQLITE_READONLY_DIRECTORY, or SQLITE_CANTOPEN). The store is then read from a copy in memory,
 * marked as a rollback-journal database: exactly the file's committed content (nothing can be
 * pending in a -wal file that does not exist).
 */
function snapshotOf(path: string, cause: unknown): BetterSqlite3.Database {
  const wal = statSync(`${path}-wal`, { throwIfNoEntry: false });
  const size = statSync(path).size;
  const fix =
    'give its readers write access to the directory (SQLite keeps a -shm file beside a store in WAL mode), or have its owner publish it in rollback-journal mode (sqlite3 FILE "PRAGMA journal_mode=DELETE")';
  if ((wal && wal.size > 0) || size > SNAPSHOT_MAX_BYTES) {
    const why =
      wal && wal.size > 0
        ? `its write-ahead log ${path}-wal holds changes SQLite cannot read without ${path}-shm`
        : 'SQLite cannot create its -shm file there';
    throw new SandtrailError(
      'STORE_READONLY',
      `cannot read the store ${path} from a directory this user may not write: ${why}; ${fix}`,
      { file: path },
      { cause },
    );
  }
  const image = readFileSync(path);
  // bytes 18 and 19: file format write and read versions, 2 for WAL, 1 for a rollback journal
  if (image[18] === 2) image[18] = 1;
  if (image[19] === 2) image[19] = 1;
  return new BetterSqlite3(image, { readonly: true });
}

/** The file's shape, through `db`; the snapshot instead when SQLite cannot read the file in place. */
function readShape(path: string, db: BetterSqlite3.Database): { db: BetterSqlite3.Database; shape: Shape } {
  try {
    return { db, shape: shapeOf(db) };
  } catch (err) {
    const code = String((err as { code?: unknown }).code ?? '');
    if (!code.startsWith('SQLITE_READONLY') && !code.startsWith('SQLITE_CANTOPEN')) throw err;
    db.close();
    const copy = snapshotOf(path, err);
    return { db: copy, shape: shapeOf(copy) };
  }
}

/**
 * Opens a store for reads only: a read-only connection that never creates, migrates or writes the
 * file (a store shared read-only, mode 0444 or in a directory the reader cannot write, is read as
 * it is). The file must hold a store. One written by an older version is brought up to date
 * through `upgrade` (an ordinary open for writes, closed again) when this process may write it;
 * otherwise tables it lacks read as empty and a column it lacks is an error naming the file.
 */
export function openForReads(path: string, upgrade: () => void, busyTimeoutMs: number): BetterSqlite3.Database {
  const open = (): { db: BetterSqlite3.Database; shape: Shape } => {
    let db: BetterSqlite3.Database;
    try {
      db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    } catch (err) {
      if ((err as { code?: unknown }).code === 'SQLITE_CANTOPEN') throw unreadable(path, err);
      throw err;
    }
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    try {
      return readShape(path, db);
    } catch (err) {
      if (db.open) db.close();
      throw err;
    }
  };
  let { db, shape } = open();
  if (!shape.tables.has('behaviours')) {
    db.close();
    throw new SandtrailError(
      'NOT_FOUND',
      `no store at ${path} (${specOf(path)}): the file holds no sandtrail store; run a backfill first or check --store`,
    );
  }
  let missing = lacks(shape);
  const outdated = missing.tables.length + missing.columns.length + missing.indexes.length > 0;
  if (outdated && writable(path)) {
    db.close();
    upgrade();
    ({ db, shape } = open());
    missing = lacks(shape);
  }
  if (!shape.views.has('behaviours')) {
    // a store from before the split by day: its tables become the undated partition at its first write
    db.close();
    throw new SandtrailError(
      'STORE_READONLY',
      `the store ${path} was written by an older version and is not split by day yet: a read-only open cannot do it; run any sandtrail command on it once as a user who may write it and its directory`,
      { file: path },
    );
  }
  if (missing.columns.length > 0) {
    db.close();
    throw new SandtrailError(
      'STORE_READONLY',
      `the store ${path} was written by an older version and lacks ${missing.columns.join(', ')}: a read-only open cannot add them; run any sandtrail command on it once as a user who may write it and its directory`,
      { file: path },
    );
  }
  // tables added since the store was written hold nothing yet: empty stand-ins in the connection's
  // own temporary schema answer for them, and the file is left as it is
  const { ddl } = currentSchema();
  for (const table of missing.tables) {
    db.exec((ddl.get(table) as string).replace(/^CREATE TABLE (IF NOT EXISTS )?/i, 'CREATE TEMP TABLE '));
  }
  return db;
}
