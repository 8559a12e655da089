import type { ItemResult } from '../Sink.js';

/** The code of an error thrown by better-sqlite3 (`SQLITE_BUSY`, `SQLITE_IOERR_WRITE`, ...), else ''. */
function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** `SQLITE_IOERR_WRITE` → `SQLITE_IOERR`: SQLite's extended codes refine a primary one. */
function primaryCode(code: string): string {
  const cut = code.indexOf('_', 'SQLITE_'.length);
  return cut < 0 ? code : code.slice(0, cut);
}

/** Primary codes of the failures that clear up by themselves: another writer holds the lock, the disk is full or failing. */
const TRANSIENT_PRIMARY: ReadonlySet<string> = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_IOERR']);

/**
 * Whether a SQLite failure may go away on a retry, extended codes included (SQLITE_BUSY_RECOVERY
 * while another connection recovers the WAL, SQLITE_IOERR_FSYNC, ...): the writes it aborted are
 * retried, never dead-lettered as if the document were at fault.
 */
export function isTransientSqlite(err: unknown): boolean {
  return TRANSIENT_PRIMARY.has(primaryCode(codeOf(err)));
}

/** SQLITE_BUSY and its extended codes: another connection holds the lock (or recovers the WAL). */
export function isBusy(err: unknown): boolean {
  return primaryCode(codeOf(err)) === 'SQLITE_BUSY';
}

/** The result of an item whose write failed: the error is rethrown when transient (its transaction aborts and the whole call is retried), else the item alone is rejected. */
export function rejectUnlessTransient(err: unknown, id: string): ItemResult {
  if (isTransientSqlite(err)) throw err;
  return { id, status: 'rejected', code: codeOf(err) || 'SQLITE_ERROR', reason: (err as Error).message };
}

/** The result of each item of a call whose transaction itself failed (lock timeout, I/O): retryable when transient, else rejected. */
export function callFailed(err: unknown, id: string): ItemResult {
  const code = codeOf(err) || 'SQLITE_ERROR';
  const reason = (err as Error).message;
  return isTransientSqlite(err) ? { id, status: 'retryable', code, reason } : { id, status: 'rejected', code, reason };
}
