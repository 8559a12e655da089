export { startReadApi } from './ReadApi.js';
export type { ReadApi, ReadApiOptions } from './ReadApi.js';
export { v3Error, v3Object, V3_ERRORS } from './envelope.js';
export type { V3ErrorCode } from './envelope.js';
export { encodePivotCursor, type PivotAnchor } from './pivotPage.js';
