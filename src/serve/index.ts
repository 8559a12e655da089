export { startReadApi } from './ReadApi.js';
export type { ReadApi, ReadApiOptions } from './ReadApi.js';
export { v3Error, v3Object, encodeCursor, decodeCursor, V3_ERRORS } from './envelope.js';
export type { V3ErrorCode } from './envelope.js';
