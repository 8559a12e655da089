/**
 * Synthetic GTI file_behaviour feed: a seeded record generator with every documented variant,
 * planted malformed lines, and a streaming writer of per-minute batch files plus a manifest that
 * says exactly what a pipeline must end up storing.
 */
export { Rng } from './Rng.js';
export { createPivotPools, publicIp, type PivotPools, type PivotPoolSizes } from './PivotPools.js';
export {
  DEFAULT_VARIANT_RATES,
  VARIANT_NAMES,
  emptyTally,
  resolveVariantRates,
  type VariantName,
  type VariantRates,
  type VariantTally,
} from './VariantRates.js';
export {
  API_BASE,
  FEED_LINK_BASE,
  canonicalId,
  generateRecord,
  identityOf,
  type FeedRecord,
  type GenerateRecordOptions,
  type RecordIdentity,
} from './generateRecord.js';
export { MALFORMED_KINDS, malformedLine, type MalformedKind } from './malformedLine.js';
export { EXTENSIONS, findCompressor, openBatchWriter, type BatchWriter, type Compression } from './openBatchWriter.js';
export { writeFeed, type WriteFeedOptions } from './writeFeed.js';
export type { FeedManifest, ManifestFile, ManifestOversize, ManifestUpdate, MalformedEntry } from './FeedManifest.js';
export { vocab } from './vocab.js';
export { detectionVocab } from './detectionVocab.js';
