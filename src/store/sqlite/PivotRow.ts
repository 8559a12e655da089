import type { Pivots } from '../../normalize/index.js';
import { pivotKey, type PivotKind } from '../Sink.js';

/** The kinds of value a pivot row holds (a file's own SHA-256 is the behaviours' column). */
export type PivotValueKind = Exclude<PivotKind, 'sha256'>;

/** A pivot row waiting for its call's other rows, to be inserted in key order. */
export interface PivotRow {
  /** The position of its document in the call. */
  item: number;
  /** The day of the partition it goes to. */
  day: number;
  kind: string;
  value: string;
  id: string;
  date: number | null;
  sandbox: string;
  verdicts: string;
}

/**
 * The order of a new day's pivots key (kind, value, sandbox_name, verdicts, id); a day keyed
 * (kind, value, id) gets its rows in the right order of values, which is most of the locality.
 * JavaScript compares UTF-16 code units and SQLite UTF-8 bytes: they agree on ASCII (hashes, rule
 * ids), and any other value only loses locality.
 */
export function byPivotKey(a: PivotRow, b: PivotRow): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  if (a.value !== b.value) return a.value < b.value ? -1 : 1;
  if (a.sandbox !== b.sandbox) return a.sandbox < b.sandbox ? -1 : 1;
  if (a.verdicts !== b.verdicts) return a.verdicts < b.verdicts ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The pivot rows of one sink call, and which document last replaced each behaviour's rows. */
export interface PendingPivots {
  rows: PivotRow[];
  /** Behaviour id → position of the version written last in the call: only its rows are kept. */
  latest: Map<string, number>;
}

/**
 * The (kind, value) keys of a document's pivot rows, in the order they are written: what the sink
 * inserts, and so what it deletes when a newer version replaces them. Values are pivotKey'd and
 * listed once. Tolerates a partial or malformed pivots object (a document of an older schema).
 */
export function pivotKeysOf(p: Partial<Pivots> | null | undefined): { kind: PivotValueKind; value: string }[] {
  const out: { kind: PivotValueKind; value: string }[] = [];
  if (!p || typeof p !== 'object') return out;
  const seen = new Set<string>();
  const put = (kind: PivotValueKind, value: unknown): void => {
    if (typeof value !== 'string') return;
    const key = pivotKey(value);
    if (key === '' || seen.has(`${kind}\u0000${key}`)) return;
    seen.add(`${kind}\u0000${key}`);
    out.push({ kind, value: key });
  };
  put('behash', p.behash);
  const list = (kind: PivotValueKind, values: unknown): void => {
    if (Array.isArray(values)) for (const v of values) put(kind, v);
  };
  list('sigma_rule_id', p.sigma_rule_ids);
  list('ja3', p.ja3);
  list('ja3s', p.ja3s);
  list('dropped_sha256', p.dropped_sha256);
  return out;
}
