import { WEBHOOK_NAME } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import { PIVOT_KINDS, pivotKey, type PivotKind } from './Sink.js';

/** One thing a watch looks for: a pivot value. */
export interface WatchCondition {
  kind: PivotKind;
  value: string;
}

/** Where a watch's hits are announced; both optional (a watch may only record its hits). */
export interface WatchNotify {
  /** Absolute path of a JSON-lines file each hit is appended to. */
  file?: string;
  /**
   * The name of a configured webhook (`webhooks.NAME`) each hit is POSTed to as JSON: its URL,
   * often holding a secret, stays in each process's configuration. A store written before named
   * webhooks may hold a URL here instead: still delivered to, never logged or printed whole.
   */
  webhook?: string;
}

/** A standing question: tell me when a behaviour with any of these pivot values is stored. */
export interface Watch {
  /** Unique; letters, digits, `.`, `_`, `-` (it names ids, metric labels and dead-letter batches). */
  name: string;
  /** Any one matching is a hit. Hash values are kept lower-case. */
  conditions: WatchCondition[];
  notify: WatchNotify;
  /** Epoch milliseconds. */
  createdAt: number;
}

/** One behaviour version that matched a watch; recorded once per (watch, behaviourId, lastModified). */
export interface WatchHit {
  watch: string;
  behaviourId: string;
  /** The matched version's last_modification_date (epoch seconds). */
  lastModified: number;
  sha256: string;
  sandbox: string;
  /** The watch's conditions this version matched. */
  matched: WatchCondition[];
  /** Epoch milliseconds when the hit was recorded. */
  at: number;
}

export interface WatchHitQuery {
  /** Only hits recorded at or after this epoch-millisecond time. */
  since?: number;
  limit?: number;
  offset?: number;
  /** Only hits after this one in the listing's order (a page's last hit): hits recorded meanwhile move no page. */
  after?: Pick<WatchHit, 'at' | 'lastModified' | 'behaviourId'>;
  /** The listing's order reversed: oldest first (what a reader catching up from a position wants). */
  oldestFirst?: boolean;
}

/**
 * Watchlists and their hits, kept by every backend of a Store. `recordHit` is the one place that
 * decides "new": it answers true only the first time it sees (watch, behaviourId, lastModified),
 * atomically in the backend (a primary key, a create-only document id), so replayed index jobs,
 * several workers and a `--retro` run racing a live worker still notify each hit once.
 */
export interface WatchStore {
  /** Stores a new watch (validated and normalized); an existing name throws WATCH_EXISTS. */
  add(watch: Watch): Promise<Watch>;
  /** Every watch, sorted by name. */
  list(): Promise<Watch[]>;
  get(name: string): Promise<Watch | null>;
  /** Removes a watch and its hits; false when no watch had that name. */
  remove(name: string): Promise<boolean>;
  /**
   * True the first time this (watch, behaviourId, lastModified) is recorded, false ever after.
   * `watchCreatedAt` names the watch that matched: when no watch of that name and creation time
   * is stored any more (removed, or removed and added again while a worker still held the old
   * one), nothing is recorded and the answer is false, so a removed watch notifies nothing.
   */
  recordHit(hit: WatchHit, watchCreatedAt: number): Promise<boolean>;
  /** A watch's hits, newest first (`at`, then lastModified, then behaviour id), or that order reversed. */
  hits(name: string, q?: WatchHitQuery): Promise<WatchHit[]>;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * Throws USAGE unless `name` is a name sandtrail stores (a watch's, a saved collection's): it
 * appears in URLs and file names, so 1-100 letters, digits, ".", "_" or "-", not starting with a symbol.
 */
export function checkName(what: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new SandtrailError(
      'USAGE',
      `bad ${what} name "${String(name)}": 1-100 letters, digits, ".", "_" or "-", not starting with a symbol`,
    );
  }
}

const HEX_LENGTH: Partial<Record<PivotKind, number>> = { sha256: 64, dropped_sha256: 64, ja3: 32, ja3s: 32 };

/** The key a condition value is compared by, for both sides: pivot values compare lower-case, trimmed. */
export function conditionKey(kind: PivotKind, value: string): string {
  return `${kind}\u0000${pivotKey(value)}`;
}

/** The stored form of a condition value: hashes lower-case; sigma rule ids as given, trimmed. */
function conditionValue(c: WatchCondition): string {
  const v = typeof c.value === 'string' ? c.value.trim() : '';
  if (v === '') throw new SandtrailError('USAGE', `watch condition ${c.kind}: empty value`);
  if (v.length > 1024) throw new SandtrailError('USAGE', `watch condition ${c.kind}: value longer than 1024 characters`);
  const hex = HEX_LENGTH[c.kind];
  if (hex !== undefined && !new RegExp(`^[0-9a-fA-F]{${hex}}$`).test(v)) {
    throw new SandtrailError('USAGE', `watch condition ${c.kind}: "${v}" is not ${hex} hexadecimal digits`);
  }
  return c.kind === 'sigma_rule_id' ? v : v.toLowerCase();
}

/**
 * Validates a watch and returns its stored form (conditions normalized and deduplicated, in the
 * order given); throws USAGE for anything a backend must not store. Both backends call it, so a
 * watch means the same in SQLite and Elasticsearch.
 */
export function normalizeWatch(w: Watch): Watch {
  checkName('watch', w?.name);
  if (!Array.isArray(w.conditions) || w.conditions.length === 0) {
    throw new SandtrailError('USAGE', `watch ${w.name}: at least one condition is needed`);
  }
  const seen = new Set<string>();
  const conditions: WatchCondition[] = [];
  for (const c of w.conditions) {
    if (!PIVOT_KINDS.includes(c?.kind)) throw new SandtrailError('USAGE', `watch ${w.name}: unknown condition kind "${String(c?.kind)}"`);
    const value = conditionValue(c);
    const key = conditionKey(c.kind, value);
    if (seen.has(key)) continue;
    seen.add(key);
    conditions.push({ kind: c.kind, value });
  }
  const notify: WatchNotify = {};
  if (w.notify?.file !== undefined) {
    if (typeof w.notify.file !== 'string' || w.notify.file === '') throw new SandtrailError('USAGE', `watch ${w.name}: empty file path`);
    notify.file = w.notify.file;
  }
  if (w.notify?.webhook !== undefined) {
    if (typeof w.notify.webhook !== 'string' || !WEBHOOK_NAME.test(w.notify.webhook)) {
      // a URL often carries its token in the path or query: the store keeps a name, the config the URL
      const url = typeof w.notify.webhook === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(w.notify.webhook);
      throw new SandtrailError(
        'USAGE',
        url
          ? `watch ${w.name}: a webhook URL is not kept in the store (it often carries its secret): name it in the configuration (webhooks.NAME in the config file, or SANDTRAIL_WEBHOOK_NAME=URL) and give its name`
          : `watch ${w.name}: a webhook is named by lower-case letters, digits, _ and - (at most 64), as in the configuration's webhooks`,
      );
    }
    notify.webhook = w.notify.webhook;
  }
  if (!Number.isSafeInteger(w.createdAt) || w.createdAt < 0) throw new SandtrailError('USAGE', `watch ${w.name}: bad createdAt`);
  return { name: w.name, conditions, notify, createdAt: w.createdAt };
}

/** The one identity of a hit, as a string (the Elasticsearch document id). */
export function watchHitKey(h: Pick<WatchHit, 'watch' | 'behaviourId' | 'lastModified'>): string {
  return `${h.watch}|${h.behaviourId}|${h.lastModified}`;
}
