/**
 * The values `npm run bench:hunt` reads, picked from the store itself: the most and a least
 * frequent value of each kind, and the behaviours and hashes the other reads start from. One
 * picker per store: SQLite through its own indexes, Elasticsearch through aggregations.
 */
import type { Client, estypes } from '@elastic/elasticsearch';
import BetterSqlite3 from 'better-sqlite3';
import { PIVOT_FIELDS, type PivotKind } from '../src/store/index.js';

/** The values and ids a run reads, from the store it times. */
export interface HuntPicks {
  /** The most (`hot`) or a least (`cold`) frequent value of a kind, with the behaviours carrying it in the whole store. */
  pick(kind: PivotKind, heat: 'hot' | 'cold'): Promise<{ value: string; n: number }>;
  /** The newest analysis date stored (epoch seconds), or null. */
  latest(): Promise<number | null>;
  /** The greatest id among the behaviours carrying a behash. */
  newestWithBehash(value: string): Promise<string>;
  /** The first id from '8' on: a behaviour in the middle of the id order. */
  middleId(): Promise<string>;
  /** Some behaviour carrying a behash. */
  anyWithBehash(value: string): Promise<string>;
  /** The MD5 and SHA-1 the reports of a file carry. */
  hashesOf(sha256: string): Promise<{ md5: string; sha1: string }>;
  close(): Promise<void>;
}

function fail(why: string): never {
  throw new Error(why);
}

/** Picks from a SQLite store file (read-only). */
export function sqlitePicks(file: string): HuntPicks {
  const db = new BetterSqlite3(file, { readonly: true });
  // Values are picked in the day holding the most behaviours, through its own indexes: a GROUP BY
  // over the views reads every day's table whole (over 15 minutes for a 36 GB store), then
  // counted over every day.
  const days = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'behaviours_[0-9]*'")
    .pluck()
    .all() as string[];
  const span = (t: string): number => (db.prepare(`SELECT max(rowid) - min(rowid) FROM ${t}`).pluck().get() as number | null) ?? -1;
  const largest = days.map((t) => ({ t, n: span(t) })).sort((a, b) => b.n - a.n)[0]?.t;
  const one = <T>(sql: string, ...args: unknown[]): T => (db.prepare(sql).get(...args) as T | undefined) ?? fail(`nothing for ${sql}`);
  return {
    pick: async (kind, heat) => {
      if (!largest) fail('the store holds no day');
      const order = heat === 'hot' ? 'DESC' : 'ASC';
      const found = (
        kind === 'sha256'
          ? db.prepare(`SELECT sha256 FROM ${largest} GROUP BY sha256 ORDER BY count(*) ${order}, sha256 LIMIT 1`).pluck().get()
          : db
              .prepare(
                `SELECT value FROM ${largest.replace('behaviours', 'pivots')} WHERE kind = ? GROUP BY value ORDER BY count(*) ${order}, value LIMIT 1`,
              )
              .pluck()
              .get(kind)
      ) as string | undefined;
      if (found === undefined) fail(`the store holds no ${kind} value`);
      const n = (
        kind === 'sha256'
          ? db.prepare('SELECT count(*) FROM behaviours WHERE sha256 = ?').pluck().get(found)
          : db.prepare('SELECT count(*) FROM pivots WHERE kind = ? AND value = ?').pluck().get(kind, found)
      ) as number;
      return { value: found, n };
    },
    latest: async () => {
      const each = days.map((t) => db.prepare(`SELECT max(analysis_date) FROM ${t}`).pluck().get() as number | null);
      const max = Math.max(...each.map((x) => x ?? -Infinity));
      return Number.isFinite(max) ? max : null;
    },
    newestWithBehash: async (v) =>
      one<{ id: string }>("SELECT id FROM pivots WHERE kind = 'behash' AND value = ? ORDER BY id DESC LIMIT 1", v).id,
    middleId: async () => one<{ id: string }>("SELECT id FROM behaviour_days WHERE id >= '8' ORDER BY id LIMIT 1").id,
    anyWithBehash: async (v) => one<{ id: string }>("SELECT id FROM pivots WHERE kind = 'behash' AND value = ? LIMIT 1", v).id,
    hashesOf: async (sha) => one<{ md5: string; sha1: string }>('SELECT md5, sha1 FROM behaviours WHERE sha256 = ? LIMIT 1', sha),
    close: async () => void db.close(),
  };
}

interface Source {
  id: string;
  context_attributes?: { file_md5?: string; file_sha1?: string };
}

/** Picks from the behaviour indices of an Elasticsearch store (its read alias `<prefix>-behaviours`). */
export function esPicks(client: Client, prefix: string): HuntPicks {
  const index = `${prefix}-behaviours`;
  const term = (kind: PivotKind, value: string): estypes.QueryDslQueryContainer => ({ term: { [PIVOT_FIELDS[kind]]: value } });
  const first = async (query: estypes.QueryDslQueryContainer, sort: estypes.Sort = [{ id: 'asc' }]): Promise<Source> => {
    const r = await client.search<Source>({ index, query, sort, size: 1, _source: ['id', 'context_attributes'] });
    return r.hits.hits[0]?._source ?? fail(`no behaviour for ${JSON.stringify(query)}`);
  };
  return {
    pick: async (kind, heat) => {
      const r = await client.search({
        index,
        size: 0,
        aggs: {
          v: {
            terms: {
              field: PIVOT_FIELDS[kind],
              size: 1,
              shard_size: 1000,
              order: [{ _count: heat === 'hot' ? 'desc' : 'asc' }, { _key: 'asc' }],
            },
          },
        },
      });
      const buckets = (r.aggregations?.v as { buckets?: { key: string }[] } | undefined)?.buckets ?? [];
      const value = buckets[0]?.key ?? fail(`the store holds no ${kind} value`);
      // the aggregation's count is per shard and approximate: the check compares with an exact count
      const n = (await client.count({ index, query: term(kind, value) })).count;
      return { value, n };
    },
    latest: async () => {
      const r = await client.search({ index, size: 0, aggs: { m: { max: { field: 'analysis_date' } } } });
      const v = (r.aggregations?.m as { value?: number | null } | undefined)?.value;
      return typeof v === 'number' ? Math.floor(v / 1000) : null;
    },
    newestWithBehash: async (v) => (await first(term('behash', v), [{ id: 'desc' }])).id,
    middleId: async () => (await first({ range: { id: { gte: '8' } } })).id,
    anyWithBehash: async (v) => (await first(term('behash', v))).id,
    hashesOf: async (sha) => {
      const c = (await first(term('sha256', sha))).context_attributes ?? {};
      return { md5: c.file_md5 ?? fail(`no MD5 for ${sha}`), sha1: c.file_sha1 ?? fail(`no SHA-1 for ${sha}`) };
    },
    close: async () => undefined,
  };
}
