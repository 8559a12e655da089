import type { Database, Statement } from 'better-sqlite3';
import { SandtrailError } from '../../errors/index.js';
import { normalizeWatch, type Watch, type WatchHit, type WatchHitQuery, type WatchStore } from '../WatchStore.js';

// Conditions and notify settings are small JSON texts: a watch is always read whole (the matcher
// loads every watch), never searched by them. Hits are keyed by (watch, behaviour, version), the
// identity recordHit's "first time" is decided on.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS watches (
  name TEXT PRIMARY KEY NOT NULL,
  conditions TEXT NOT NULL,
  notify TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS watch_hits (
  watch TEXT NOT NULL,
  behaviour_id TEXT NOT NULL,
  last_modified INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  sandbox TEXT NOT NULL,
  matched TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (watch, behaviour_id, last_modified)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS watch_hits_by_at ON watch_hits(watch, at);
CREATE INDEX IF NOT EXISTS watch_hits_at ON watch_hits(at);
`;

interface WatchRow {
  name: string;
  conditions: string;
  notify: string;
  created_at: number;
}

interface HitRow {
  watch: string;
  behaviour_id: string;
  last_modified: number;
  sha256: string;
  sandbox: string;
  matched: string;
  at: number;
}

const fromWatchRow = (r: WatchRow): Watch => ({
  name: r.name,
  conditions: JSON.parse(r.conditions) as Watch['conditions'],
  notify: JSON.parse(r.notify) as Watch['notify'],
  createdAt: r.created_at,
});

const fromHitRow = (r: HitRow): WatchHit => ({
  watch: r.watch,
  behaviourId: r.behaviour_id,
  lastModified: r.last_modified,
  sha256: r.sha256,
  sandbox: r.sandbox,
  matched: JSON.parse(r.matched) as WatchHit['matched'],
  at: r.at,
});

/** Watchlists and their hits in the embedded SQLite file. */
export class SqliteWatchStore implements WatchStore {
  private readonly insertWatch: Statement;
  private readonly insertHit: Statement;

  constructor(private readonly db: Database) {
    // a read-only connection finds the schema in place (openForReads checks it) and never writes
    if (!db.readonly) db.exec(SCHEMA);
    this.insertWatch = db.prepare('INSERT INTO watches (name, conditions, notify, created_at) VALUES (?, ?, ?, ?)');
    // the primary key decides "first time": a replayed job's insert changes nothing; and only the
    // watch as it is stored now records hits (one statement, so a remove cannot fall between)
    this.insertHit = db.prepare(`
      INSERT OR IGNORE INTO watch_hits (watch, behaviour_id, last_modified, sha256, sandbox, matched, at)
      SELECT @watch, @behaviourId, @lastModified, @sha256, @sandbox, @matched, @at
      WHERE EXISTS (SELECT 1 FROM watches WHERE name = @watch AND created_at = @watchCreatedAt)`);
  }

  async add(watch: Watch): Promise<Watch> {
    const w = normalizeWatch(watch);
    try {
      this.insertWatch.run(w.name, JSON.stringify(w.conditions), JSON.stringify(w.notify), w.createdAt);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new SandtrailError('WATCH_EXISTS', `a watch named "${w.name}" exists already (remove it first)`, { watch: w.name });
      }
      throw err;
    }
    return w;
  }

  async list(): Promise<Watch[]> {
    return (this.db.prepare('SELECT * FROM watches ORDER BY name').all() as WatchRow[]).map(fromWatchRow);
  }

  async get(name: string): Promise<Watch | null> {
    const row = this.db.prepare('SELECT * FROM watches WHERE name = ?').get(name) as WatchRow | undefined;
    return row ? fromWatchRow(row) : null;
  }

  async remove(name: string): Promise<boolean> {
    return this.db
      .transaction(() => {
        // a watch added again under the same name starts without the old one's hits
        this.db.prepare('DELETE FROM watch_hits WHERE watch = ?').run(name);
        return this.db.prepare('DELETE FROM watches WHERE name = ?').run(name).changes > 0;
      })
      .immediate();
  }

  async recordHit(hit: WatchHit, watchCreatedAt: number): Promise<boolean> {
    return this.insertHit.run({ ...hit, matched: JSON.stringify(hit.matched), watchCreatedAt }).changes === 1;
  }

  async hits(name: string, q: WatchHitQuery = {}): Promise<WatchHit[]> {
    const a = q.after;
    // after a hit in the listing's order: older, or as old and of an older version, or the same and a later id
    const [lt, gt, desc, asc] = q.oldestFirst ? ['>', '<', 'ASC', 'DESC'] : ['<', '>', 'DESC', 'ASC'];
    const after = a
      ? `AND (at ${lt} @at OR (at = @at AND (last_modified ${lt} @lm OR (last_modified = @lm AND behaviour_id ${gt} @id))))`
      : '';
    const rows = this.db
      .prepare(
        `SELECT * FROM watch_hits WHERE watch = @name AND at >= @since ${after}
         ORDER BY at ${desc}, last_modified ${desc}, behaviour_id ${asc} LIMIT @limit OFFSET @offset`,
      )
      .all({
        name,
        since: q.since ?? 0,
        limit: q.limit ?? 1000,
        offset: q.offset ?? 0,
        ...(a ? { at: a.at, lm: a.lastModified, id: a.behaviourId } : {}),
      }) as HitRow[];
    return rows.map(fromHitRow);
  }
}
