import type { Database, Statement } from 'better-sqlite3';
import { PARTITION_GLOB, dayOfTable, partitionDdl, partitionOf, viewsDdl, type Partition } from './partitionSchema.js';

/** Where a behaviour's live version is. */
export interface Location {
  day: number;
  last_modification_date: number;
}

/**
 * The partitions of one connection's store, read from its schema (and read again whenever the
 * schema changes, as another process may add or drop a day), and the locator of behaviours
 * across them. Creating and dropping a partition rebuild the views in the caller's transaction.
 */
export class Partitions {
  private version = -1;
  private parts: Partition[] = [];
  private byDay = new Map<number, Partition>();
  private readonly caches = new Set<Map<string, unknown>>();
  private readonly locateStmt: Statement;
  private readonly placeStmt: Statement;
  private readonly forgetStmt: Statement;
  private readonly schemaVersion: Statement;
  /** Days created since the views were last rebuilt (ensure, then settleViews). */
  private viewsBehind = false;
  /** Inside `pinned`: the schema was read once for the transaction and is not asked again. */
  private pinnedNow = false;

  constructor(private readonly db: Database) {
    this.locateStmt = db.prepare('SELECT day, last_modification_date FROM behaviour_days WHERE id = ?');
    this.placeStmt = db.prepare(
      `INSERT INTO behaviour_days (id, day, last_modification_date) VALUES (?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET day = excluded.day, last_modification_date = excluded.last_modification_date`,
    );
    this.forgetStmt = db.prepare('DELETE FROM behaviour_days WHERE id = ? AND day = ?');
    this.schemaVersion = db.prepare('PRAGMA schema_version').pluck();
  }

  /** Every partition, oldest first (the undated one before the days). */
  list(): readonly Partition[] {
    this.refresh();
    return this.parts;
  }

  /** The partition of a day, when the store has it. */
  get(day: number): Partition | undefined {
    this.refresh();
    return this.byDay.get(day);
  }

  /**
   * The partition of a day, created when missing. Inside a write transaction that calls
   * settleViews before it commits: the views are rebuilt once for all the days it created.
   */
  ensure(day: number): Partition {
    const have = this.get(day);
    if (have) return have;
    const p = partitionOf(day);
    this.db.exec(partitionDdl(p));
    this.viewsBehind = true;
    if (this.pinnedNow) {
      // the schema is not read again before the transaction ends: the new day joins the list here
      this.parts = [...this.parts, p].sort((a, b) => a.day - b.day);
      this.byDay.set(p.day, p);
    }
    return p;
  }

  /**
   * Runs `fn` inside a write transaction with the schema read once, at its start: no other
   * connection can change it before the commit, so the index stage does not ask for its version
   * again for every document.
   */
  pinned<T>(fn: () => T): T {
    this.refresh();
    this.pinnedNow = true;
    try {
      return fn();
    } finally {
      this.pinnedNow = false;
    }
  }

  /**
   * Forgets what was read of the schema: after a transaction that changed it rolled back, its
   * version number may come back with other changes (another process's).
   */
  invalidate(): void {
    this.version = -1;
    this.viewsBehind = false;
  }

  /** Rebuilds the views over the days ensure created, if any. */
  settleViews(): void {
    if (!this.viewsBehind) return;
    this.rebuildViews();
    this.viewsBehind = false;
  }

  /** Drops a partition's tables and the views' reference to them. Inside a write transaction. */
  drop(p: Partition): void {
    this.rebuildViews(this.list().filter((q) => q.day !== p.day));
    this.db.exec(`DROP TABLE IF EXISTS ${p.pivots}; DROP TABLE IF EXISTS ${p.behaviours};`);
  }

  /** Recreates the views over the partitions the schema holds (a migration's last step). */
  rebuildViews(parts: readonly Partition[] = this.list()): void {
    const spans = this.db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'view' AND (name GLOB 'behaviours_span_*' OR name GLOB 'pivots_span_*')")
      .pluck()
      .all() as string[];
    this.db.exec(
      viewsDdl(
        [...parts].sort((a, b) => a.day - b.day),
        spans,
      ),
    );
  }

  /** Where a behaviour's live version is, if stored. */
  locate(id: string): Location | undefined {
    return this.locateStmt.get(id) as Location | undefined;
  }

  /** Records where a behaviour's live version now is. */
  place(id: string, day: number, lmd: number): void {
    this.placeStmt.run(id, day, lmd);
  }

  /** Forgets a behaviour removed from the partition of `day`. */
  forget(id: string, day: number): void {
    this.forgetStmt.run(id, day);
  }

  /**
   * A cache of statements (or anything else) per partition, emptied when the partitions change:
   * a statement over a dropped day's table must not outlive it.
   */
  cache<T>(make: (p: Partition) => T): (p: Partition) => T {
    const map = new Map<string, T>();
    this.caches.add(map as Map<string, unknown>);
    return (p) => {
      this.refresh();
      let v = map.get(p.behaviours);
      if (v === undefined) {
        v = make(p);
        map.set(p.behaviours, v);
      }
      return v;
    };
  }

  /** Reads the partitions again when the schema changed since they were last read. */
  private refresh(): void {
    if (this.pinnedNow) return;
    const version = this.schemaVersion.get() as number;
    if (version === this.version) return;
    const names = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND ${PARTITION_GLOB}`).pluck().all() as string[];
    // a day created before pivot rows were keyed in the groups' order has its groups index
    const keyed = new Set(
      this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name GLOB 'pivots_*_groups'").pluck().all() as string[],
    );
    this.parts = names
      .map((n) => dayOfTable(n))
      .filter((d): d is number => d !== undefined)
      .sort((a, b) => a - b)
      .map((d) => {
        const p = partitionOf(d);
        return p.pivotKey === 'grouped' && keyed.has(`${p.pivots}_groups`) ? partitionOf(d, 'keyed') : p;
      });
    this.byDay = new Map(this.parts.map((p) => [p.day, p]));
    for (const c of this.caches) c.clear();
    this.version = version;
  }
}
