import type { Database } from 'better-sqlite3';
import { SandtrailError } from '../../errors/index.js';
import {
  collectionOf,
  nextMicros,
  type StoredCollection,
  type CollectionObject,
  type CollectionObjectInput,
  type CollectionObjectQuery,
  type CollectionPage,
  type CollectionStore,
  type SharedCollection,
  type SharedCollectionInput,
} from '../CollectionStore.js';

// Objects are keyed by their date in the collection (unique, increasing: the order pages follow)
// and unique by (id, version); `first` and `latest` mark the versions match[version] names.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS shared_collections (
  id TEXT PRIMARY KEY NOT NULL,
  name TEXT NOT NULL,
  kind TEXT NOT NULL,
  title TEXT NOT NULL,
  description TEXT NOT NULL,
  selection TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  added_through INTEGER NOT NULL DEFAULT 0,
  synced_from INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS shared_objects (
  collection TEXT NOT NULL,
  date_added INTEGER NOT NULL,
  object_id TEXT NOT NULL,
  version TEXT NOT NULL,
  type TEXT NOT NULL,
  first INTEGER NOT NULL,
  latest INTEGER NOT NULL,
  object TEXT NOT NULL,
  PRIMARY KEY (collection, date_added)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS shared_objects_version ON shared_objects(collection, object_id, version);
CREATE INDEX IF NOT EXISTS shared_objects_added ON shared_objects(date_added);
`;

interface ObjectRow {
  object_id: string;
  type: string;
  version: string;
  date_added: number;
  object: string;
}

/** Shared collections in the embedded SQLite file: an append is one immediate transaction. */
export class SqliteCollectionStore implements CollectionStore {
  /** False on a read-only connection to a store written before collections: every read is empty. */
  private readonly present: boolean;

  constructor(private readonly db: Database) {
    if (!db.readonly) db.exec(SCHEMA);
    this.present =
      !db.readonly || db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'shared_objects'").get() !== undefined;
  }

  async save(c: SharedCollectionInput): Promise<SharedCollection> {
    this.db
      .prepare(
        `INSERT INTO shared_collections (id, name, kind, title, description, selection, created_at)
         VALUES (@id, @name, @kind, @title, @description, @selection, @createdAt)
         ON CONFLICT(id) DO UPDATE SET title = excluded.title, description = excluded.description, selection = excluded.selection`,
      )
      .run(c);
    const saved = await this.get(c.id);
    if (!saved) throw new SandtrailError('STORE_DAMAGED', `collection ${c.id} was not kept`);
    return saved;
  }

  async list(): Promise<SharedCollection[]> {
    if (!this.present) return [];
    return (this.db.prepare('SELECT * FROM shared_collections ORDER BY name, id').all() as StoredCollection[]).map(collectionOf);
  }

  async get(id: string): Promise<SharedCollection | null> {
    if (!this.present) return null;
    const row = this.db.prepare('SELECT * FROM shared_collections WHERE id = ?').get(id) as StoredCollection | undefined;
    return row ? collectionOf(row) : null;
  }

  async remove(id: string): Promise<boolean> {
    return this.db.transaction(() => {
      this.db.prepare('DELETE FROM shared_objects WHERE collection = ?').run(id);
      return this.db.prepare('DELETE FROM shared_collections WHERE id = ?').run(id).changes > 0;
    })();
  }

  async append(id: string, objects: readonly CollectionObjectInput[], o: { syncedFrom?: number } = {}): Promise<{ added: number }> {
    const held = this.db.prepare('SELECT 1 FROM shared_objects WHERE collection = ? AND object_id = ? LIMIT 1').pluck();
    const heldVersion = this.db.prepare('SELECT 1 FROM shared_objects WHERE collection = ? AND object_id = ? AND version = ?').pluck();
    const supersede = this.db.prepare('UPDATE shared_objects SET latest = 0 WHERE collection = ? AND object_id = ? AND latest = 1');
    const insert = this.db.prepare(
      `INSERT INTO shared_objects (collection, date_added, object_id, version, type, first, latest, object)
       VALUES (?, ?, ?, ?, ?, ?, 1, ?)`,
    );
    // immediate: the write lock is taken before the last date is read, so no other append interleaves
    return this.db
      .transaction(() => {
        const c = this.db.prepare('SELECT added_through FROM shared_collections WHERE id = ?').get(id) as
          { added_through: number } | undefined;
        if (!c) throw new SandtrailError('NOT_FOUND', `no shared collection ${id}`);
        let last = c.added_through;
        let added = 0;
        for (const obj of objects) {
          const any = held.get(id, obj.id) !== undefined;
          if (obj.versioned ? heldVersion.get(id, obj.id, obj.version) !== undefined : any) continue;
          if (any) supersede.run(id, obj.id);
          last = nextMicros(last);
          insert.run(id, last, obj.id, obj.version, obj.type, any ? 0 : 1, JSON.stringify(obj.object));
          added++;
        }
        this.db
          .prepare('UPDATE shared_collections SET added_through = ?, synced_from = ? WHERE id = ?')
          .run(last, o.syncedFrom ?? this.syncedFrom(id), id);
        return { added };
      })
      .immediate();
  }

  async objects(id: string, q: CollectionObjectQuery): Promise<CollectionPage> {
    if (!this.present) return { objects: [], more: false };
    const c = this.db.prepare('SELECT added_through FROM shared_collections WHERE id = ?').get(id) as { added_through: number } | undefined;
    if (!c) return { objects: [], more: false };
    const where = ['collection = ?', 'date_added > ?', 'date_added <= ?'];
    const args: unknown[] = [id, q.addedAfter ?? 0, c.added_through];
    const inList = (column: string, values: readonly string[] | undefined): void => {
      if (!values?.length) return;
      where.push(`${column} IN (${values.map(() => '?').join(', ')})`);
      args.push(...values);
    };
    inList('object_id', q.ids);
    inList('type', q.types);
    const v = q.version ?? { last: true };
    if (!v.all) {
      const any: string[] = [];
      if (v.last) any.push('latest = 1');
      if (v.first) any.push('first = 1');
      if (v.versions?.length) {
        any.push(`version IN (${v.versions.map(() => '?').join(', ')})`);
        args.push(...v.versions);
      }
      where.push(any.length ? `(${any.join(' OR ')})` : '0');
    }
    const rows = this.db
      .prepare(`SELECT object_id, type, version, date_added, object FROM shared_objects WHERE ${where.join(' AND ')} ORDER BY date_added`)
      .iterate(...args) as IterableIterator<ObjectRow>;
    const page: CollectionObject[] = [];
    let bytes = 0;
    let more = false;
    for (const r of rows) {
      if (page.length >= q.limit || (page.length > 0 && q.maxBytes !== undefined && bytes + r.object.length > q.maxBytes)) {
        more = true;
        break;
      }
      bytes += r.object.length;
      page.push({
        id: r.object_id,
        type: r.type,
        version: r.version,
        dateAdded: r.date_added,
        object: JSON.parse(r.object) as Record<string, unknown>,
      });
    }
    return { objects: page, more };
  }

  private syncedFrom(id: string): number {
    return (this.db.prepare('SELECT synced_from FROM shared_collections WHERE id = ?').pluck().get(id) as number | undefined) ?? 0;
  }
}
