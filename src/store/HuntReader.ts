import { PIVOT_KINDS, type PivotKind } from './Sink.js';

/** A name and how many behaviours carry it (a sandbox, a verdict). */
export interface NameCount {
  name: string;
  count: number;
}

/** One behaviour as a hunter's list shows it. */
export interface BehaviourLine {
  id: string;
  sha256: string;
  sandbox_name: string;
  verdicts: string[];
  analysis_date: number | null;
}

/** What the store knows of one pivot value, computed from the stored documents (never from counters). */
export interface PivotSummary {
  kind: PivotKind;
  value: string;
  behaviours: number;
  /** Distinct analysed files (sha256). */
  files: number;
  /** Most frequent first, then by name. */
  sandboxes: NameCount[];
  verdicts: NameCount[];
  /** Oldest and newest analysis_date (epoch seconds) among them. */
  firstSeen: number | null;
  lastSeen: number | null;
}

/** A value's summary and one page of its behaviours, newest first. */
export interface PivotStats extends PivotSummary {
  /** The newest behaviours (analysis_date desc, then id), one page. */
  newest: BehaviourLine[];
  offset: number;
  limit: number;
}

/** The hunter's first question about a sample: who else shares its pivot values. */
export interface RelatedBehaviours {
  id: string;
  /** Each pivot value of the behaviour with how many other behaviours share it. */
  values: { kind: PivotKind; value: string; others: number }[];
  /** Other behaviours ranked by how many of those values they share (then newest first), with which ones. */
  related: (BehaviourLine & { shared: { kind: PivotKind; value: string }[] })[];
}

/** A value seen in a file's reports, with the sandboxes that saw it. */
export interface SeenValue {
  value: string;
  sandboxes: string[];
}

/** Every sandbox's report of one file, merged. */
export interface FileRollup {
  sha256: string;
  md5: string | null;
  sha1: string | null;
  reports: { id: string; sandbox_name: string; verdicts: string[]; behash: string | null; analysis_date: number | null }[];
  sigma: (SeenValue & { level: string | null; title: string | null })[];
  ja3: SeenValue[];
  ja3s: SeenValue[];
  dropped_sha256: SeenValue[];
  /** ATT&CK techniques by id, with the description the reports give (null when none does). */
  mitre_techniques: (SeenValue & { name: string | null })[];
  /** Signature matches (YARA, Sigma, CAPA, OpenIOC rules) by format and name. */
  signatures: { name: string; format: string | null; description: string | null; sandboxes: string[] }[];
  hosts: SeenValue[];
  ips: SeenValue[];
}

/**
 * The hunting reads of a store, answered from the stored documents through indexes (SQLite) or
 * single aggregation requests (Elasticsearch), so they stay exact under at-least-once delivery.
 */
/** A value's behaviours over time: counts per bucket of analysis date (a bucket starts at `t`, Unix seconds). */
export interface Timeline {
  /** The bucket's length in seconds: 3600 (hours) or 86400 (days). */
  bucketSeconds: number;
  /** Buckets holding behaviours, oldest first. */
  counts: { t: number; count: number }[];
  /** Behaviours without an analysis date (in no bucket). */
  undated: number;
}

export interface HuntReader {
  /** Statistics of one pivot value and a page of its newest behaviours; zero behaviours when unknown. */
  pivotStats(kind: PivotKind, value: string, page?: { limit?: number; offset?: number }): Promise<PivotStats>;
  /**
   * The most frequent values of one pivot kind among behaviours analysed since `since` (epoch
   * seconds), most frequent first then by value, each with its summary over those same behaviours.
   */
  top(kind: Exclude<PivotKind, 'sha256'>, opts?: { since?: number; limit?: number }): Promise<PivotSummary[]>;
  /** Null when the behaviour is not stored. */
  related(id: string, opts?: { limit?: number }): Promise<RelatedBehaviours | null>;
  /**
   * By SHA-256, MD5 or SHA-1 (any case): every stored report of the file (an MD5 or SHA-1 names
   * the file's SHA-256 through the reports carrying it); null when no report of the file is stored.
   */
  fileRollup(hash: string): Promise<FileRollup | null>;
  /**
   * A value's behaviours counted per hour or day of their analysis date, aggregated by the store
   * (every behaviour counted once, however many it holds): the counts and `undated` sum to the
   * value's `behaviours`.
   */
  timeline(kind: PivotKind, value: string, bucketSeconds: 3600 | 86400): Promise<Timeline>;
  /**
   * The values of the other kinds that a value's behaviours carry, each with how many of them do:
   * the `limit` most frequent per kind (ties by value), kinds in PIVOT_KINDS order.
   */
  cooccurring(kind: PivotKind, value: string, limit?: number): Promise<{ kind: PivotKind; value: string; behaviours: number }[]>;
  /** The summaries of several values of one kind (at most HUNT_LIMITS.top.max), in `values` order; an unknown value's counts are zeros. */
  valueSummaries(kind: PivotKind, values: readonly string[]): Promise<PivotSummary[]>;
}

/** Sizes of the hunting reads: the defaults and caps every backend applies, so they answer alike. */
export const HUNT_LIMITS = Object.freeze({
  /** `pivotStats` page size. */
  page: { default: 20, max: 1000 },
  /** `top` values. */
  top: { default: 10, max: 100 },
  /** `related` behaviours. */
  related: { default: 20, max: 1000 },
  /** Reports of one file in a rollup. */
  reports: 1000,
  /** Elasticsearch's result window (from + size): past it a page cannot be read. */
  window: 10_000,
});

/** A caller's size: a default when absent or not a number, else an integer within [0, max]. */
export function boundedInt(v: number | undefined, def: number, max: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return def;
  return Math.min(max, Math.max(0, Math.floor(v)));
}

/** The page `pivotStats` reads: its limit, and an offset kept inside the result window. */
export function pageOf(page: { limit?: number; offset?: number } = {}): { limit: number; offset: number } {
  const limit = boundedInt(page.limit, HUNT_LIMITS.page.default, HUNT_LIMITS.page.max);
  return { limit, offset: boundedInt(page.offset, 0, HUNT_LIMITS.window - limit) };
}

/** Code-unit order of two strings (hashes and ids are ASCII, where it is also the stores' byte order). */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Counts by name, most frequent first, then by name. */
export function nameCounts(counts: Iterable<readonly [string, number]>): NameCount[] {
  return [...counts].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || compareText(a.name, b.name));
}

/** Pivot values in PIVOT_KINDS order, then by value. */
export function byKindThenValue(a: { kind: PivotKind; value: string }, b: { kind: PivotKind; value: string }): number {
  return PIVOT_KINDS.indexOf(a.kind) - PIVOT_KINDS.indexOf(b.kind) || compareText(a.value, b.value);
}
