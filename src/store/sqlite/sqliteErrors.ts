import { SandtrailError, type ErrorCode } from '../../errors/index.js';
import type { ItemResult } from '../Sink.js';

/** The code of an error thrown by better-sqlite3 (`SQLITE_BUSY`, `SQLITE_IOERR_WRITE`, ...), else ''. */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** `SQLITE_IOERR_WRITE` → `SQLITE_IOERR`: SQLite's extended codes refine a primary one. */
function primaryCode(code: string): string {
  if (!code.startsWith('SQLITE_')) return code;
  const cut = code.indexOf('_', 'SQLITE_'.length);
  return cut < 0 ? code : code.slice(0, cut);
}

/**
 * What a SQLite failure means, by primary code: the one table of the SQLite backend.
 * - `transient`: another connection holds the lock, or the statement was interrupted; the call
 *   is retried as it is.
 * - a store-fault code: the store's own failure (full disk, I/O, a damaged or unwritable file);
 *   the whole call fails with it and no document is blamed.
 * - anything else (a constraint, a value too big, a statement error) is the document's: it alone
 *   is rejected and dead-lettered.
 */
const MEANING: Readonly<Record<string, { kind: 'transient' } | { kind: 'store'; code: ErrorCode; words: string }>> = {
  // plain SQLITE_BUSY comes after the whole busy timeout (15 s): another process kept the write
  // lock all along, which the pipeline's own commits never do. Its extended codes below pass soon.
  SQLITE_BUSY: { kind: 'store', code: 'STORE_LOCKED', words: 'locked by another process for the whole busy timeout' },
  SQLITE_BUSY_TIMEOUT: { kind: 'store', code: 'STORE_LOCKED', words: 'locked by another process for the whole busy timeout' },
  SQLITE_BUSY_RECOVERY: { kind: 'transient' },
  SQLITE_BUSY_SNAPSHOT: { kind: 'transient' },
  SQLITE_LOCKED: { kind: 'transient' },
  SQLITE_INTERRUPT: { kind: 'transient' },
  SQLITE_PROTOCOL: { kind: 'transient' },
  SQLITE_SCHEMA: { kind: 'transient' },
  SQLITE_FULL: { kind: 'store', code: 'STORE_FULL', words: 'disk full' },
  // the -shm file beside a WAL store could not grow (ENOSPC, a quota): a read fails this way on a full disk
  SQLITE_IOERR_SHMSIZE: { kind: 'store', code: 'STORE_FULL', words: 'disk full (SQLite could not extend the -shm file beside the store)' },
  SQLITE_IOERR: { kind: 'store', code: 'STORE_IO', words: 'I/O error reading or writing the file' },
  SQLITE_NOMEM: { kind: 'store', code: 'STORE_IO', words: 'out of memory' },
  SQLITE_CORRUPT: { kind: 'store', code: 'STORE_DAMAGED', words: 'the file is damaged' },
  SQLITE_NOTADB: { kind: 'store', code: 'STORE_DAMAGED', words: 'the file is not a SQLite database' },
  SQLITE_FORMAT: { kind: 'store', code: 'STORE_DAMAGED', words: 'the file is not a SQLite database' },
  SQLITE_READONLY: { kind: 'store', code: 'STORE_READONLY', words: 'the store is read-only' },
  SQLITE_PERM: { kind: 'store', code: 'STORE_READONLY', words: 'permission denied' },
  SQLITE_AUTH: { kind: 'store', code: 'STORE_READONLY', words: 'permission denied' },
  SQLITE_CANTOPEN: { kind: 'store', code: 'STORE_READONLY', words: 'cannot open the file (missing, or its directory is not writable)' },
};

/** What the fix is, per store-fault code, for the one line an operator reads. */
const FIX: Partial<Record<ErrorCode, string>> = {
  STORE_FULL: 'free space on its filesystem (or move the store), then run the same command again',
  STORE_IO: 'check the disk and the kernel log, then run the same command again',
  STORE_DAMAGED:
    'restore it from a backup, or recover it (sqlite3 FILE ".recover" | sqlite3 NEW.db) and point --store at the recovered file',
  STORE_READONLY: 'give the process write access to the file and its directory (the -wal and -shm files live beside it)',
  STORE_LOCKED: 'find the process holding it (fuser FILE) and let it finish or stop it, then run the same command again',
};

/** Whether a SQLite failure may go away when the same call is made again (lock held, interrupted). */
export function isTransientSqlite(err: unknown): boolean {
  return meaningOf(err)?.kind === 'transient';
}

/**
 * A plain SQLITE_ERROR is a statement's or a value's, except one naming a table or column that is
 * not there: the store's schema lost a part (a day's table dropped by hand, a partition gone).
 */
const MISSING_SCHEMA = /\bno such (table|column|index)\b|has no column named/;
const SCHEMA_LOST = {
  kind: 'store',
  code: 'STORE_DAMAGED',
  words: 'the store lacks a table or column it needs (sandtrail doctor lists the parts missing)',
} as const;

/** The table's row of a failure: its own extended code's, else its primary code's. */
function meaningOf(err: unknown): (typeof MEANING)[string] | undefined {
  const code = codeOf(err);
  if (code === 'SQLITE_ERROR' && MISSING_SCHEMA.test(String((err as Error | null)?.message))) return SCHEMA_LOST;
  return MEANING[code] ?? MEANING[primaryCode(code)];
}

/** SQLITE_BUSY and its extended codes: another connection holds the lock (or recovers the WAL). */
export function isBusy(err: unknown): boolean {
  return primaryCode(codeOf(err)) === 'SQLITE_BUSY';
}

/**
 * The store fault a SQLite failure is, as a typed error naming the file, the cause in the words a
 * user searches for, and the fix; undefined when the failure is transient or the document's.
 */
export function sqliteStoreFault(err: unknown, file: string): SandtrailError | undefined {
  if (err instanceof SandtrailError) return err;
  const raw = codeOf(err);
  const meaning = meaningOf(err);
  if (meaning?.kind !== 'store') return undefined;
  const message = `${meaning.words}: SQLite store ${file}: ${(err as Error).message} (${raw}); ${FIX[meaning.code] ?? ''}`;
  return new SandtrailError(meaning.code, message, { sqlite: raw, file }, { cause: err });
}

/** Throws the failure as the store's when the table says so; otherwise returns, for the caller to decide. */
export function throwIfStoreFault(err: unknown, file: string): void {
  const fault = sqliteStoreFault(err, file);
  if (fault) throw fault;
}

/** The result of an item whose write failed: rethrown when transient or the store's (its transaction aborts), else the item alone is rejected. */
export function rejectUnlessTransient(err: unknown, id: string): ItemResult {
  if (isTransientSqlite(err) || meaningOf(err)?.kind === 'store' || err instanceof SandtrailError) throw err;
  return { id, status: 'rejected', code: codeOf(err) || 'SQLITE_ERROR', reason: (err as Error).message };
}

/**
 * The result of each item of a call whose transaction itself failed: retryable when transient;
 * a store fault is thrown (typed, naming `file`); otherwise every item is rejected.
 */
export function callFailed(err: unknown, id: string, file: string): ItemResult {
  throwIfStoreFault(err, file);
  const code = codeOf(err) || 'SQLITE_ERROR';
  const reason = (err as Error).message;
  return isTransientSqlite(err) ? { id, status: 'retryable', code, reason } : { id, status: 'rejected', code, reason };
}
