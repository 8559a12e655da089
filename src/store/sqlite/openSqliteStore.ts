import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { SandtrailError } from '../../errors/index.js';
import { retentionCutoffs, type RetentionDays } from '../Retention.js';
import type { Store } from '../Store.js';
import { SqliteArtefactLog } from './SqliteArtefactLog.js';
import { SqliteBatchLog } from './SqliteBatchLog.js';
import { SqliteDeadLetterStore } from './SqliteDeadLetterStore.js';
import { SqliteHuntReader } from './SqliteHuntReader.js';
import { SqlitePrivateFileStore } from './SqlitePrivateFileStore.js';
import { SqliteRetention } from './SqliteRetention.js';
import { SqliteSink } from './SqliteSink.js';
import { SqliteWatchStore } from './SqliteWatchStore.js';
import { SqliteCollectionStore } from './SqliteCollectionStore.js';
import { guardPart } from './guardStore.js';
import { checkStoreFile, openForReads } from './openForReads.js';
import { isBusy, sqliteStoreFault } from './sqliteErrors.js';
import { removeReadSideFiles, sideFilesAbsent } from './readSideFiles.js';

/** Page cache of each connection, KiB. */
const CACHE_KIB = 64 * 1024;
/** WAL bytes between automatic checkpoints. */
const CHECKPOINT_BYTES = 256 * 1024 ** 2;
/** WAL bytes kept on disk after a checkpoint. */
const WAL_KEPT_BYTES = 64 * 1024 ** 2;

/** How long a statement waits for another process's lock on the store (sqlite.busyTimeoutMs). */
const BUSY_TIMEOUT_MS = 15_000;

/**
 * Switches the file to WAL. SQLite answers SQLITE_BUSY at once, without its busy handler, while
 * another connection holds a lock on a file not yet in WAL mode: workers started together on a
 * fresh store would fail with "database is locked", so the switch waits as a statement would.
 */
function useWal(db: BetterSqlite3.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let waitMs = 5; ; waitMs = Math.min(waitMs * 2, 200)) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      // opening is synchronous everywhere else too: a blocking pause, not a timer
      Atomics.wait(pause, 0, 0, waitMs);
    }
  }
}

export interface SqliteStoreOptions {
  /** Documents nested deeper are rejected `too_deep`. */
  maxDepth?: number;
  /**
   * For commands that only read: a read-only connection to an existing store, which creates,
   * migrates and writes nothing (a store shared read-only is read as it is). See openForReads.
   */
  readOnly?: boolean;
  /** For commands that change an existing store only (dead-letter replay): a missing file is an error, not a new store. */
  mustExist?: boolean;
  /** Retention in days (retention.days): writes of documents already past it are skipped. */
  retentionDays?: RetentionDays;
  /** How long a statement waits for another connection's lock (default 15 s); past it, STORE_LOCKED. */
  busyTimeoutMs?: number;
  /** Test seam: the clock retention is judged by (ms since the epoch). */
  now?: () => number;
}

/**
 * The embedded store: documents, private file reports (a table of their own), dead letters and
 * the batch log in one SQLite file, in WAL mode so lookups run while a worker writes. A write
 * creates the file when missing, never its directory; a path that is a directory or a file that
 * is not a SQLite database is refused before SQLite is asked.
 */
export function openSqliteStore(file: string, o: SqliteStoreOptions = {}): Store {
  try {
    return openGuarded(file, o);
  } catch (err) {
    // a file that is not a database, damaged or unwritable fails at its first statement, here
    throw sqliteStoreFault(err, resolve(file)) ?? err;
  }
}

function openGuarded(file: string, o: SqliteStoreOptions): Store {
  if (!file) throw new SandtrailError('USAGE', 'sqlite: store needs a file, e.g. --store sqlite:./sandtrail.db');
  const path = resolve(file);
  checkStoreFile(path, o);
  const busyTimeoutMs = o.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
  // a read of a store no process has open makes SQLite create its -wal and -shm: removed again at close
  const tidyAtClose = o.readOnly === true && sideFilesAbsent(path);
  const db = o.readOnly
    ? openForReads(path, () => void openGuarded(file, { ...o, readOnly: false }).close(), busyTimeoutMs)
    : openForWrites(path, busyTimeoutMs);
  let closed = false;
  const stillThere = o.readOnly ? undefined : fileWatch(path);
  // the sink first: it creates (or migrates) the tables the hunting reads query
  const days = o.retentionDays ?? 'off';
  const now = o.now ?? Date.now;
  const sink = new SqliteSink(db, o.maxDepth, () => retentionCutoffs({ days }, now()).behavioursBefore);
  // every part's failures go through the backend's one error table (guardPart)
  return {
    spec: `sqlite:${path}`,
    sink: guardPart(sink, path, stillThere),
    dlq: guardPart(new SqliteDeadLetterStore(db), path, stillThere),
    batches: guardPart(new SqliteBatchLog(db), path, stillThere),
    privateFiles: guardPart(new SqlitePrivateFileStore(db, o.maxDepth), path, stillThere),
    artefacts: guardPart(new SqliteArtefactLog(db), path, stillThere),
    hunt: guardPart(new SqliteHuntReader(db), path, stillThere),
    watches: guardPart(new SqliteWatchStore(db), path, stillThere),
    collections: guardPart(new SqliteCollectionStore(db), path, stillThere),
    retention: guardPart(new SqliteRetention(db), path, stillThere),
    // opened above: a file that cannot be had has thrown already
    check: async () => undefined,
    close: async () => {
      if (closed) return;
      closed = true;
      db.close();
      if (tidyAtClose) removeReadSideFiles(path);
    },
  };
}

/** Which file is at `path` now (its device and inode), or undefined when none is: a file replaced at the path is another. */
export function fileIdentity(path: string): string | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? `${st.dev}:${st.ino}` : undefined;
}

/**
 * A check that the file at `path` is still the one opened (its device and inode): a store file
 * removed or replaced while a process writes it takes those writes with it (they go to the
 * unlinked file), so a write that succeeded there is STORE_DAMAGED, never a minute reported ok.
 */
function fileWatch(path: string): () => void {
  const opened = fileIdentity(path);
  return () => {
    const now = fileIdentity(path);
    if (now === opened) return;
    throw new SandtrailError(
      'STORE_DAMAGED',
      `${path} was ${now === undefined ? 'removed' : 'replaced'} while this process wrote to it: what it wrote since went to the file that is gone; stop the processes writing it, then run the same backfill again (its minutes are written anew)`,
      { file: path },
    );
  };
}

/**
 * Refuses a SQLite database that holds tables but no sandtrail store (every store sandtrail
 * writes has `behaviours`, created with its first tables in one transaction): writing would
 * add sandtrail's tables beside another application's, or fail halfway on a table of the same
 * name. Checked before anything, WAL mode included, changes the file.
 */
function refuseForeign(db: BetterSqlite3.Database, path: string): void {
  const names = db
    .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[];
  if (names.length === 0 || names.includes('behaviours')) return;
  const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? `, … (${names.length} in all)` : '');
  throw new SandtrailError(
    'NOT_FOUND',
    `${path} is a SQLite database but holds no sandtrail store (its tables: ${shown}); sandtrail writes only a new file or a store of its own: check --store (sqlite:${path})`,
    { file: path },
  );
}

/** A read-write connection, created when missing, tuned for the index stage's writes. */
function openForWrites(path: string, busyTimeoutMs: number): BetterSqlite3.Database {
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(path);
  } catch (err) {
    // a directory SQLite may not create the file in (read-only, a pseudo-filesystem) is the store's fault, with its fix
    throw (
      sqliteStoreFault(err, path) ?? new SandtrailError('SINK_UNAVAILABLE', `cannot open SQLite file ${path}: ${(err as Error).message}`)
    );
  }
  // 4 KB pages: every commit rewrites each index page its random keys (ids, hashes, pivot values)
  // touch, so once a day's partition outgrows the cache the bytes written follow the page size:
  // 1.7x fewer than with 32 KB pages at 150,000 reports of a day, for 2.5% more time on a 150 MB
  // backfill into an empty store (npm run bench:growth, docs/benchmarks.md).
  // Takes effect only while the file is empty, so it comes before any table; an existing store
  // keeps its size.
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  try {
    refuseForeign(db, path);
  } catch (err) {
    db.close();
    throw err;
  }
  db.pragma('page_size = 4096');
  // WAL lets lookups run while a worker writes; several local workers share the file.
  useWal(db, busyTimeoutMs);
  db.pragma('synchronous = NORMAL');
  // Every chunk rewrites pages of the random-key indexes (ids, hashes, pivot rows). SQLite's
  // defaults (a 2 MB page cache, a checkpoint, fsync included, per 1,000 WAL pages: 32 MB here)
  // made the index stage re-read and re-sync the same pages all along: a 64 MiB cache and a
  // checkpoint per 256 MiB of WAL store the 200 MB benchmark feed 1.8x faster (5.2 → 2.9 s,
  // close included), for up to 64 MiB more memory per process and a larger WAL file (cut back to
  // 64 MiB after each checkpoint).
  db.pragma(`cache_size = -${CACHE_KIB}`);
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.pragma(`wal_autocheckpoint = ${Math.ceil(CHECKPOINT_BYTES / pageSize)}`);
  db.pragma(`journal_size_limit = ${WAL_KEPT_BYTES}`);
  return db;
}
