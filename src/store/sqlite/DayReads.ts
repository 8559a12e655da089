import type { Database, Statement } from 'better-sqlite3';
import { Partitions } from './Partitions.js';
import type { PivotValueKind } from './PivotRow.js';
import { PIVOT_ROW, type Partition } from './partitionSchema.js';

/** A pivot row of a behaviour, with its copy of the behaviour's analysis date. */
export interface OwnRow {
  id: string;
  kind: PivotValueKind;
  value: string;
  date: number | null;
}

/**
 * A stored behaviour as a probe of its pivot rows names it: id, sandbox and verdict list (its
 * rows' copies of them), the key of either pivot layout with (kind, value). Readers take the
 * sandbox and verdicts from the row or index entry that gave them the id, never from the
 * behaviour's own row, which is a random read of the largest table.
 */
export interface Owner {
  id: string;
  sandbox_name: string;
  verdicts: string;
}

/**
 * The reads that go to one partition at a time (SqliteHuntReader, topSince): a behaviour's row
 * and pivot rows are in the partition the locator names, and a walk in an index's order runs in
 * each partition and is merged. Aggregates over every day go through the views instead.
 */
export class DayReads {
  readonly parts: Partitions;
  private readonly statements: (p: Partition) => Map<string, Statement>;
  private readonly spanOf: (p: Partition) => Statement;
  private readonly newestOf: (p: Partition) => Statement;

  constructor(readonly db: Database) {
    this.parts = new Partitions(db);
    this.statements = this.parts.cache(() => new Map<string, Statement>());
    // two subqueries: SQLite reads min() or max() alone from the end of the key, both together by a scan
    this.spanOf = this.parts.cache((p) =>
      db.prepare(`SELECT (SELECT max(rowid) FROM ${p.behaviours}) - (SELECT min(rowid) FROM ${p.behaviours}) + 1`).pluck(),
    );
    this.newestOf = this.parts.cache((p) =>
      db.prepare(`SELECT analysis_date FROM ${p.behaviours} INDEXED BY ${p.index.byDate} ORDER BY analysis_date DESC LIMIT 1`).pluck(),
    );
  }

  /**
   * The latest analysis date in a partition (null when it holds none): the first entry of its
   * date index. A read of what was analysed since a time skips the days whose latest is older,
   * and a walk newest first stops at them.
   */
  newest(p: Partition): number | null {
    return (this.newestOf(p).get() as number | null | undefined) ?? null;
  }

  /** A statement over one partition, prepared once: `sql(p)` names its tables. */
  stmt(p: Partition, sql: (p: Partition) => string): Statement {
    const text = sql(p);
    const cache = this.statements(p);
    let s = cache.get(text);
    if (!s) {
      s = this.db.prepare(text);
      cache.set(text, s);
    }
    return s;
  }

  /**
   * About how many behaviours a partition holds, without counting them: the span of its rowids
   * (rows are appended; retention removes the oldest first and a day's moves are few). Only the
   * hunting reads' choice of plan depends on it.
   */
  span(p: Partition): number {
    return (this.spanOf(p).get() as number | null) ?? 0;
  }

  /** About how many behaviours the store holds (the partitions' spans). */
  stored(): number {
    return this.parts.list().reduce((n, p) => n + this.span(p), 0);
  }

  /** Whether a behaviour is stored. */
  has(id: string): boolean {
    return this.parts.locate(id) !== undefined;
  }

  /** Some behaviours' ids by the partition holding each (those not stored are left out). */
  byPartition(ids: readonly string[]): [Partition, string[]][] {
    const out = new Map<number, [Partition, string[]]>();
    for (const id of new Set(ids)) {
      const where = this.parts.locate(id);
      const p = where && this.parts.get(where.day);
      if (!p) continue;
      const entry = out.get(p.day) ?? [p, []];
      entry[1].push(id);
      out.set(p.day, entry);
    }
    return [...out.values()];
  }

  /**
   * The pivot rows of some behaviours among some (kind, value) pairs: in each behaviour's
   * partition, one probe of its pivots key per pair (CROSS JOIN fixes the order).
   */
  rowsOf(owners: readonly Owner[], values: readonly { kind: string; value: string }[]): OwnRow[] {
    const byId = new Map(owners.map((o) => [o.id, o]));
    return this.byPartition([...byId.keys()]).flatMap(([p, list]) =>
      this.rowsIn(
        p,
        list.map((id) => byId.get(id) as Owner),
        values,
      ),
    );
  }

  /**
   * The same for behaviours known to be in partition `p`: one prepared probe of the key per
   * behaviour and pair (a statement over JSON arrays of the keys, which re-parses them for every
   * row, made `related` of two behaviours of a 1,000,000-report store 0.80 and 1.8 s instead of
   * 0.65 and 1.1 s).
   */
  rowsIn(p: Partition, owners: readonly Owner[], values: readonly { kind: string; value: string }[]): OwnRow[] {
    const probe = this.stmt(p, (q) => `SELECT analysis_date FROM ${q.pivots} WHERE ${PIVOT_ROW}`).raw();
    const out: OwnRow[] = [];
    for (const o of owners) {
      for (const { kind, value } of values) {
        const row = probe.get(kind, value, o.sandbox_name, o.verdicts, o.id) as [number | null] | undefined;
        if (row) out.push({ id: o.id, kind: kind as PivotValueKind, value, date: row[0] });
      }
    }
    return out;
  }

  /** A behaviour as the probes of its pivot rows name it, from its own row; undefined when not stored. */
  owner(id: string): (Owner & { pivots: string | null }) | undefined {
    const where = this.parts.locate(id);
    const p = where && this.parts.get(where.day);
    if (!p) return undefined;
    return this.stmt(
      p,
      (q) => `SELECT id, sandbox_name, verdicts, json_extract(doc, '$.pivots') AS pivots FROM ${q.behaviours} WHERE id = ?`,
    ).get(id) as (Owner & { pivots: string | null }) | undefined;
  }

  /**
   * The distinct files (a canonical id starts with its file's SHA-256) of each value's rows of
   * `kind` among `values`, over every day, or only the rows analysed at or after `since`. Each
   * day's files of the value are sorted (a day keyed (kind, value, id) hands them over in that
   * order; one keyed in the groups' order is sorted here: ~120 ms for 250,000), and the days'
   * lists are merged, counting each file once: 230 ms for the 212,518 files of a value held by a
   * quarter of a million-behaviour store over 30 days, against 393 ms for the same merge in SQL.
   */
  files(kind: string, values: readonly string[], since?: number): Map<string, number> {
    const when = since === undefined ? '' : ' AND analysis_date >= @since';
    const parts = this.parts.list().filter((p) => since === undefined || (this.newest(p) ?? -Infinity) >= since);
    const out = new Map<string, number>();
    for (const value of values) {
      const lists = parts.map((p) =>
        sorted(
          this.stmt(
            p,
            (q) => `SELECT substr(id, 1, 64) FROM ${q.pivots} INDEXED BY ${q.index.key} WHERE kind = @kind AND value = @value${when}`,
          )
            .pluck()
            .all({ kind, value, since }) as string[],
        ),
      );
      out.set(value, distinctOfSorted(lists));
    }
    return out;
  }

  /** Runs `read` in one read transaction: every partition it lists and reads is of one snapshot. */
  snapshot<T>(read: () => T): T {
    return this.db.inTransaction ? read() : this.db.transaction(read).deferred();
  }
}

/** Newest first (no analysis date last, as SQLite's DESC), then by id: the hunting lists' order. */
export function byNewest(a: { id: string; date: number | null }, b: { id: string; date: number | null }): number {
  if (a.date !== b.date) return a.date === null ? 1 : b.date === null ? -1 : b.date - a.date;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** `list` itself when sorted in code-unit order (SQLite's order for ASCII keys), else a sorted copy. */
function sorted(list: string[]): string[] {
  for (let i = 1; i < list.length; i++) if ((list[i - 1] as string) > (list[i] as string)) return [...list].sort();
  return list;
}

/** How many distinct strings sorted lists hold together: a k-way merge, each string counted once. */
export function distinctOfSorted(lists: readonly (readonly string[])[]): number {
  const heads = lists.map(() => 0);
  let n = 0;
  let last: string | undefined;
  for (;;) {
    let best = -1;
    let min = '';
    for (let i = 0; i < lists.length; i++) {
      const list = lists[i] as readonly string[];
      const h = heads[i] as number;
      if (h < list.length && (best < 0 || (list[h] as string) < min)) {
        best = i;
        min = list[h] as string;
      }
    }
    if (best < 0) return n;
    heads[best] = (heads[best] as number) + 1;
    if (min !== last) {
      n += 1;
      last = min;
    }
  }
}
