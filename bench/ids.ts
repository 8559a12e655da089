/** The exact-ids check: the SQLite store must hold exactly the manifest's expected ids. */
import BetterSqlite3 from 'better-sqlite3';

/** How the stored ids compare with the manifest's expectedIds. */
export interface IdCheck {
  /** True when the store holds exactly the expected ids, nothing more or less. */
  idsMatch: boolean;
  /** Expected ids the store lacks, and stored ids the manifest does not expect (counts, then a few examples). */
  missing: number;
  unexpected: number;
  examples: { missing: string[]; unexpected: string[] };
}

/** Compares the behaviours table's ids with `expected` as sets (neither order nor duplicates in the manifest matter). */
export function compareIds(dbPath: string, expected: readonly string[]): IdCheck {
  const db = new BetterSqlite3(dbPath, { readonly: true });
  let stored: string[];
  try {
    stored = db.prepare('SELECT id FROM behaviours').pluck().all() as string[];
  } finally {
    db.close();
  }
  return diffIds(stored, expected);
}

/** The set difference both ways, with up to five examples each, sorted. */
export function diffIds(stored: readonly string[], expected: readonly string[]): IdCheck {
  const want = new Set(expected);
  const have = new Set(stored);
  const missing = [...want].filter((id) => !have.has(id)).sort();
  const unexpected = [...have].filter((id) => !want.has(id)).sort();
  // A set equality alone would pass a store holding one id twice: the row count must agree too.
  const idsMatch = missing.length === 0 && unexpected.length === 0 && stored.length === want.size;
  return {
    idsMatch,
    missing: missing.length,
    unexpected: unexpected.length,
    examples: { missing: missing.slice(0, 5), unexpected: unexpected.slice(0, 5) },
  };
}
