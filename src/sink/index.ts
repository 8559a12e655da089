export { PIVOT_KINDS, pivotKey, invalidDocReason, withSerialized, serializedOf } from './Sink.js';
export type { Sink, ItemResult, PivotKind } from './Sink.js';
export { SqliteSink } from './SqliteSink.js';
