/** The wire format of documents between the stages: a document's meta and JSON, and the chunk that carries them. */
export { sinkDocOf, metaOf, jsonText, verdictsOf, hexDigest, hasHuntFields } from './SinkDoc.js';
export type { SinkDoc, DocMeta } from './SinkDoc.js';
export { encodeChunk, decodeChunk, type EncodedChunk } from './chunkCodec.js';
