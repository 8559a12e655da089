export { PIVOT_KINDS, pivotKey } from './Sink.js';
export type { Sink, ItemResult, PivotKind } from './Sink.js';
export { SqliteSink } from './SqliteSink.js';
