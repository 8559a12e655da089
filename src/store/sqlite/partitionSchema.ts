/*
 * The layout of the embedded store's behaviours: one pair of tables per UTC day of the
 * behaviours' last_modification_date (behaviours_2026_11_01, pivots_2026_11_01), with their own
 * small indexes, behind the views `behaviours` and `pivots` that hunters query. A store written
 * before the split keeps its tables as the undated partition (behaviours_undated,
 * pivots_undated), which retention empties like any other.
 */

/** The day number of the undated partition (a store's tables from before the split). */
export const UNDATED = -1;

const DAY_SECONDS = 86_400;
/** 9999-12-31, the last day a partition name can spell. */
const LAST_DAY = 2_932_896;

/**
 * One pivot row of a behaviour, whatever its partition's pivot key: (kind, value, sandbox_name,
 * verdicts, id), the sandbox and verdict list being the behaviour's own row's (its pivot rows
 * carry copies of them).
 */
export const PIVOT_ROW = 'kind = ? AND value = ? AND sandbox_name = ? AND verdicts = ? AND id = ?';

/** The same in SQL: the row of pivots alias `r` that is behaviour alias `d`'s, for @kind and @value. */
export const OWN_ROW = (r: string, d: string): string =>
  `${r}.kind = @kind AND ${r}.value = @value AND ${r}.sandbox_name = ${d}.sandbox_name AND ${r}.verdicts = ${d}.verdicts AND ${r}.id = ${d}.id`;

/** What a write or a removal reads of a stored behaviour to find its pivot rows. */
export interface StoredRow {
  pivots: string | null;
  sandbox_name: string;
  verdicts: string;
}

/** The columns of `behaviours`, in the view's order. */
export const BEHAVIOUR_COLUMNS = 'id, sha256, sandbox_name, analysis_date, last_modification_date, doc, indexed_at, verdicts, md5, sha1';
/** The columns of `pivots`, in the view's order. */
export const PIVOT_COLUMNS = 'kind, value, id, analysis_date, sandbox_name, verdicts';

/** One partition: its day, its two tables and the names of their indexes. */
export interface Partition {
  /** UTC days since 1970-01-01, or UNDATED. */
  day: number;
  behaviours: string;
  pivots: string;
  index: {
    sha256: string;
    md5: string;
    sha1: string;
    /** Newest first, covering the sandbox and verdicts (the order of the hunting lists). */
    byDate: string;
    /** Retention's order. */
    byLmd: string;
    /** A value's rows grouped by sandbox and verdict list. */
    groups: string;
    /** The pivots table's own key: (kind, value, id), or the groups' order when `pivotKey` is 'grouped'. */
    key: string;
  };
  /** How its pivot rows are keyed (see PivotKey). */
  pivotKey: PivotKey;
  /** The end of its day (Unix seconds): every behaviour in it was modified before; +∞ when undated. */
  end: number;
}

/**
 * The key of a partition's pivot rows. 'grouped': (kind, value, sandbox_name, verdicts, id), one
 * B-tree that is also the order a value's statistics group by; a probe of one behaviour's row
 * names its sandbox and verdict list, which the behaviour's own row holds. 'keyed': (kind, value,
 * id) plus an index in the groups' order, the layout of partitions created before: two random-key
 * B-trees for every row, which made 31% more bytes written (150,000 whole reports of one day:
 * 8.18 against 5.63 GB, npm run bench:growth) for the same reads. analysis_date, which the
 * groups also order by, stays out of the key: a WITHOUT ROWID key column cannot be NULL.
 */
export type PivotKey = 'grouped' | 'keyed';

/** The partition day of a last_modification_date (Unix seconds); dates no name can spell go to the first or last day. */
export function dayOf(lmd: number): number {
  return Math.min(Math.max(Math.floor(lmd / DAY_SECONDS), 0), LAST_DAY);
}

/** `2026_11_01` for a day number. */
function suffixOf(day: number): string {
  return new Date(day * DAY_SECONDS * 1000).toISOString().slice(0, 10).replaceAll('-', '_');
}

/**
 * The partition of a day (UNDATED included), with the pivot key a new partition gets unless the
 * store's schema says otherwise (the undated partition is always 'keyed').
 */
export function partitionOf(day: number, pivotKey: PivotKey = 'grouped'): Partition {
  if (day === UNDATED) {
    // the tables of a store from before the split, renamed: their indexes keep their names
    return {
      day,
      behaviours: 'behaviours_undated',
      pivots: 'pivots_undated',
      index: {
        sha256: 'behaviours_sha256',
        md5: 'behaviours_md5',
        sha1: 'behaviours_sha1',
        byDate: 'behaviours_by_date',
        byLmd: 'behaviours_by_lmd',
        groups: 'pivots_groups',
        key: 'sqlite_autoindex_pivots_undated_1',
      },
      pivotKey: 'keyed',
      end: Number.POSITIVE_INFINITY,
    };
  }
  const s = suffixOf(day);
  const b = `behaviours_${s}`;
  const p = `pivots_${s}`;
  return {
    day,
    behaviours: b,
    pivots: p,
    index: {
      sha256: `${b}_sha256`,
      md5: `${b}_md5`,
      sha1: `${b}_sha1`,
      byDate: `${b}_by_date`,
      byLmd: `${b}_by_lmd`,
      // grouped: the key is in the groups' order, and the reads that ask for the groups use it
      groups: pivotKey === 'grouped' ? `sqlite_autoindex_${p}_1` : `${p}_groups`,
      key: `sqlite_autoindex_${p}_1`,
    },
    pivotKey,
    end: (day + 1) * DAY_SECONDS,
  };
}

/** The day of a partition's behaviours table name, or undefined when the name is not one. */
export function dayOfTable(name: string): number | undefined {
  if (name === 'behaviours_undated') return UNDATED;
  const m = /^behaviours_(\d{4})_(\d{2})_(\d{2})$/.exec(name);
  if (!m) return undefined;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / 1000 / DAY_SECONDS;
}

/** The SQL pattern of every partition's behaviours table name (sqlite_master). */
export const PARTITION_GLOB = "(name GLOB 'behaviours_[0-9][0-9][0-9][0-9]_[0-9][0-9]_[0-9][0-9]' OR name = 'behaviours_undated')";

/**
 * One row per (pivot kind, value, behaviour), carrying copies of the behaviour's analysis date,
 * sandbox and verdict list: a value's statistics are then one range scan per partition, with no
 * join to the behaviours. The copies are rewritten with the pivot rows on every stored version of
 * a behaviour (SqliteSink), so they always equal the stored document's: exact under replays.
 */
export const pivotsTable = (name: string, pivotKey: PivotKey = 'keyed'): string => `
CREATE TABLE IF NOT EXISTS ${name} (
  kind TEXT NOT NULL,
  value TEXT NOT NULL,
  id TEXT NOT NULL,
  analysis_date INTEGER,
  sandbox_name TEXT NOT NULL DEFAULT '',
  verdicts TEXT NOT NULL DEFAULT '[]',
  PRIMARY KEY ${pivotKey === 'grouped' ? '(kind, value, sandbox_name, verdicts, id)' : '(kind, value, id)'}
) WITHOUT ROWID;`;

/**
 * The behaviours table of a partition. The document comes last: a column after it is read by
 * walking the document's overflow pages (a 14 KB report spans four), and the hunting lists read a
 * behaviour's verdict list. Partitions created before keep the document in sixth place; every
 * statement names its columns.
 */
export const behavioursTable = (name: string): string => `
CREATE TABLE IF NOT EXISTS ${name} (
  id TEXT PRIMARY KEY NOT NULL,
  sha256 TEXT NOT NULL,
  sandbox_name TEXT NOT NULL,
  analysis_date INTEGER,
  last_modification_date INTEGER NOT NULL,
  indexed_at INTEGER NOT NULL,
  verdicts TEXT NOT NULL DEFAULT '[]',
  md5 TEXT,
  sha1 TEXT,
  doc TEXT NOT NULL
);`;

/**
 * A partition's tables and indexes. No index of the pivot rows by id: a behaviour's own rows are
 * those of its stored document's pivots (pivotKeysOf), and each index is one more B-tree for
 * every commit to rewrite.
 */
export function partitionDdl(p: Partition): string {
  const b = p.behaviours;
  const i = p.index;
  const groups =
    p.pivotKey === 'keyed'
      ? `CREATE INDEX IF NOT EXISTS ${i.groups} ON ${p.pivots}(kind, value, sandbox_name, verdicts, analysis_date);`
      : '';
  return `${behavioursTable(b)}
${pivotsTable(p.pivots, p.pivotKey)}
CREATE INDEX IF NOT EXISTS ${i.sha256} ON ${b}(sha256);
CREATE INDEX IF NOT EXISTS ${i.md5} ON ${b}(md5);
CREATE INDEX IF NOT EXISTS ${i.sha1} ON ${b}(sha1);
CREATE INDEX IF NOT EXISTS ${i.byDate} ON ${b}(analysis_date DESC, id, sandbox_name, verdicts);
CREATE INDEX IF NOT EXISTS ${i.byLmd} ON ${b}(last_modification_date);
${groups}`;
}

/** A compound SELECT may have at most 500 terms (SQLite's default limit): views of more nest. */
const VIEW_TERMS = 400;

/**
 * The statements that (re)create the views `behaviours` and `pivots` over `parts` (and the
 * nested views a store of more than VIEW_TERMS days needs, `behaviours_span_N`). With no
 * partition the views are empty but keep their columns.
 */
export function viewsDdl(parts: readonly Partition[], existingSpans: readonly string[]): string {
  const out = ['DROP VIEW IF EXISTS behaviours;', 'DROP VIEW IF EXISTS pivots;', ...existingSpans.map((v) => `DROP VIEW IF EXISTS ${v};`)];
  const view = (name: string, columns: string, tables: readonly string[]): void => {
    if (tables.length === 0) {
      const nulls = columns
        .split(', ')
        .map((c) => `NULL AS ${c}`)
        .join(', ');
      out.push(`CREATE VIEW ${name} AS SELECT ${nulls} LIMIT 0;`);
      return;
    }
    const terms = (list: readonly string[]): string => list.map((t) => `SELECT ${columns} FROM ${t}`).join('\n  UNION ALL ');
    if (tables.length <= VIEW_TERMS) {
      out.push(`CREATE VIEW ${name} AS ${terms(tables)};`);
      return;
    }
    const spans: string[] = [];
    for (let i = 0; i < tables.length; i += VIEW_TERMS) {
      const span = `${name}_span_${spans.length}`;
      out.push(`CREATE VIEW ${span} AS ${terms(tables.slice(i, i + VIEW_TERMS))};`);
      spans.push(span);
    }
    out.push(`CREATE VIEW ${name} AS ${terms(spans)};`);
  };
  view(
    'behaviours',
    BEHAVIOUR_COLUMNS,
    parts.map((p) => p.behaviours),
  );
  view(
    'pivots',
    PIVOT_COLUMNS,
    parts.map((p) => p.pivots),
  );
  return out.join('\n');
}

/**
 * Where each behaviour's live version is: its partition's day and its last_modification_date.
 * The one random-key B-tree of the behaviours that spans every day (each partition's own are a
 * day's); a write finds the version it replaces here, in any partition, with one probe.
 */
export const LOCATOR = `
CREATE TABLE IF NOT EXISTS behaviour_days (
  id TEXT PRIMARY KEY NOT NULL,
  day INTEGER NOT NULL,
  last_modification_date INTEGER NOT NULL
) WITHOUT ROWID;`;
