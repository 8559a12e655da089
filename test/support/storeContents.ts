import assert from 'node:assert/strict';
import BetterSqlite3 from 'better-sqlite3';
import type { FeedManifest } from '../../src/synth/index.js';
import type { FakeElasticsearch } from './fakeElasticsearch.js';

/** What a store holds, in a form every backend can be compared by. */
export interface Contents {
  ids: string[];
  dead: { batch: string; line: number | null; stage: string }[];
  lmd: Map<string, number>;
}

/** Reads back what the store holds, straight from the SQLite file. */
export function storeContents(file: string): Contents {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT id, last_modification_date AS lmd FROM behaviours ORDER BY id').all() as { id: string; lmd: number }[];
    const dead = db.prepare('SELECT batch, line, stage FROM dead_letters ORDER BY batch, line').all() as {
      batch: string;
      line: number;
      stage: string;
    }[];
    return { ids: rows.map((r) => r.id), dead, lmd: new Map(rows.map((r) => [r.id, r.lmd])) };
  } finally {
    db.close();
  }
}

/** What the manifest says the dead-letter store must hold: exactly the planted malformed lines. */
export function expectedDead(m: FeedManifest): { batch: string; line: number; stage: string }[] {
  return m.files
    .flatMap((f) => f.malformed.map((x) => ({ batch: f.minute, line: x.line, stage: 'normalize' })))
    .sort((a, b) => a.batch.localeCompare(b.batch) || a.line - b.line);
}

/** Each updated id must hold the date of its newest occurrence. */
export function assertNewestWins(m: FeedManifest, lmd: Map<string, number>): void {
  const newest = new Map<string, number>();
  for (const u of m.updates) newest.set(u.id, Math.max(newest.get(u.id) ?? 0, u.lastModificationDate));
  for (const [id, date] of newest) assert.equal(lmd.get(id), date, `newest version of ${id}`);
}

/** Reads back what an Elasticsearch store under `prefix` holds, straight from the fake cluster's indices. */
export function fakeEsContents(fake: FakeElasticsearch, prefix: string): Contents {
  // every daily partition behind the read alias: one live copy per behaviour, wherever it is
  const alias = `${prefix}-behaviours`;
  const docs = [...fake.docs(alias)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [id] of docs) assert.equal(fake.copies(alias, id).length, 1, `one live copy of ${id} across partitions`);
  const dead = [...fake.docs(`${prefix}-dead-letters`).values()]
    .map(({ source: d }) => ({ batch: d.batch as string, line: d.line as number | null, stage: d.stage as string }))
    .sort((a, b) => a.batch.localeCompare(b.batch) || (a.line ?? -1) - (b.line ?? -1));
  return { ids: docs.map(([id]) => id), dead, lmd: new Map(docs.map(([id, d]) => [id, d.version])) };
}

/** Behaviours of the SQLite store so far, 0 before it exists (read while a run writes: WAL allows it). */
export function storedCount(file: string): number {
  try {
    const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM behaviours').get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}
