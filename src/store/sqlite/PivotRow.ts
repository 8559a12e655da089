/** A pivot row waiting for its call's other rows, to be inserted in key order. */
export interface PivotRow {
  /** The position of its document in the call. */
  item: number;
  kind: string;
  value: string;
  id: string;
  date: number | null;
  sandbox: string;
  verdicts: string;
}

/**
 * The order of the pivots table's key (kind, value, id). JavaScript compares UTF-16 code units and
 * SQLite UTF-8 bytes: they agree on ASCII (hashes, rule ids), and any other value only loses locality.
 */
export function byPivotKey(a: PivotRow, b: PivotRow): number {
  if (a.kind !== b.kind) return a.kind < b.kind ? -1 : 1;
  if (a.value !== b.value) return a.value < b.value ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The pivot rows of one sink call, and which document last replaced each behaviour's rows. */
export interface PendingPivots {
  rows: PivotRow[];
  /** Behaviour id → position of the version written last in the call: only its rows are kept. */
  latest: Map<string, number>;
}
