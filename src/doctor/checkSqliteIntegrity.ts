import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { removeReadSideFiles, sideFilesAbsent } from '../store/index.js';
import { checkOf, type CheckResult } from './CheckResult.js';

/** How long `PRAGMA quick_check` may run before doctor reports it unfinished (it reads every page: ~1 s per GB). */
export const INTEGRITY_TIMEOUT_MS = 20_000;

/** Problems listed by quick_check at most (the first ones say enough). */
const MAX_PROBLEMS = 5;

// A worker thread, so a check that runs past its time is terminated instead of blocking doctor:
// better-sqlite3 runs the pragma synchronously and SQLite offers no timeout of its own.
const CHECK = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
let db;
try {
  db = new Database(workerData.file, { readonly: true, fileMustExist: true });
  const rows = db.pragma('quick_check(' + workerData.max + ')');
  // quick_check reads pages, not the schema's sense: a day's table dropped by hand leaves the
  // views over the partitions naming a table that is gone
  const lost = [];
  const names = db.prepare("SELECT name FROM sqlite_master WHERE name IN ('behaviours', 'pivots')").pluck().all();
  for (const name of names) {
    try {
      db.prepare('SELECT 1 FROM ' + name + ' WHERE 0').all();
    } catch (e) {
      lost.push(e.message);
    }
  }
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'").pluck().all();
  parentPort.postMessage({ ok: true, rows: rows.map((r) => String(Object.values(r)[0])), lost, tables });
} catch (e) {
  parentPort.postMessage({ ok: false, code: e.code ?? null, message: e.message });
} finally {
  if (db) db.close();
}`;

type Reply = { ok: true; rows: string[]; lost: string[]; tables: string[] } | { ok: false; code: string | null; message: string };

const RECOVER =
  'stop the workers, restore the file from a backup, or recover what it holds: sqlite3 FILE ".recover" | sqlite3 RECOVERED.db, then point --store at the recovered file';

/**
 * The SQLite store's integrity: `PRAGMA quick_check` on a read-only connection, bounded by
 * `timeoutMs` (a warning, not a failure, when a big file takes longer). A damaged file fails,
 * naming the first problems and how to recover.
 */
export async function checkSqliteIntegrity(file: string, timeoutMs = INTEGRITY_TIMEOUT_MS): Promise<CheckResult> {
  const c = checkOf('store.integrity', 'SQLite integrity');
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  // a check is a read: it leaves no -wal or -shm that were not there
  const tidy = sideFilesAbsent(file);
  const worker = new Worker(CHECK, { eval: true, workerData: { file, module, max: MAX_PROBLEMS } });
  let timer: NodeJS.Timeout | undefined;
  const reply = await Promise.race([
    new Promise<Reply>((resolve) => {
      worker.once('message', resolve);
      worker.once('error', (err) => resolve({ ok: false, code: null, message: err.message }));
    }),
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs))),
  ]);
  clearTimeout(timer);
  await worker.terminate();
  if (tidy && reply) removeReadSideFiles(file);
  if (!reply)
    return c.warn(
      `quick_check did not finish within ${timeoutMs / 1000} s`,
      `run it without a time limit: sqlite3 ${file} "PRAGMA quick_check"`,
    );
  if (!reply.ok) {
    if (/^SQLITE_(CORRUPT|NOTADB)/.test(reply.code ?? '')) return c.fail(`${file} is damaged: ${reply.message}`, RECOVER);
    return c.warn(`could not check ${file}: ${reply.message}`, `run: sqlite3 ${file} "PRAGMA quick_check"`);
  }
  // another application's database: every command refuses it (openSqliteStore's refuseForeign)
  if (reply.tables.length > 0 && !reply.tables.includes('behaviours')) {
    const shown = reply.tables.slice(0, 5).join(', ') + (reply.tables.length > 5 ? `, … (${reply.tables.length} in all)` : '');
    return c.fail(
      `${file} is a SQLite database but holds no sandtrail store (its tables: ${shown}): every command refuses it`,
      'point --store sqlite:FILE at a sandtrail store, or at a new path for a new one',
    );
  }
  if (reply.rows.length === 1 && reply.rows[0] === 'ok') {
    if (reply.lost.length === 0) return c.pass('quick_check: ok');
    return c.fail(
      `${file} lacks parts of its store (${reply.lost.join('; ')}): writes and reads of those days fail`,
      'stop the workers and restore the file from a backup; or backfill the days again into a new store',
    );
  }
  // the first row may carry several problems on lines of their own, under a "*** in database" heading
  const problems = reply.rows.flatMap((r) => r.split('\n')).filter((l) => l.trim() && !l.startsWith('***'));
  return c.fail(`${file} is damaged: ${problems.slice(0, MAX_PROBLEMS).join('; ')}`, RECOVER);
}
