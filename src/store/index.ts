/**
 * Where everything durable lives: the interfaces every backend implements (documents `Sink`,
 * `PrivateFileStore`, `DeadLetterStore`, `BatchLog`, `ArtefactLog`, the `HuntReader` reads),
 * opening a backend from its spec (`sqlite:FILE`, `es:URL`), and the backends themselves: store/sqlite/ and
 * store/elasticsearch/ (with the index design, setup and Kibana objects). The pipeline depends
 * on the interfaces only.
 */
export { PIVOT_KINDS, pivotKey, invalidDocReason, depthRejection } from './Sink.js';
export type { Sink, ItemResult, PivotKind, ScanPage, ScanQuery } from './Sink.js';
export { PIVOT_KIND_NAMES, pivotKindOf } from './pivotKindNames.js';
export { deadLetterId } from './DeadLetterStore.js';
export type {
  DeadLetter,
  DeadLetterFilter,
  DeadLetterInput,
  DeadLetterStage,
  DeadLetterStore,
  DeadLetterSummary,
} from './DeadLetterStore.js';
export type { BatchLog, BatchLogEntry, BatchStatus } from './BatchLog.js';
export { failedEntry } from './BatchLog.js';
export { PRIVATE_FILE_KEYS, invalidPrivateFileReason } from './PrivateFileStore.js';
export type { PrivateFileKey, PrivateFileStore } from './PrivateFileStore.js';
export type { ClusterState, Store, UnassignedShard } from './Store.js';
export { healthCheckOf } from './Health.js';
export type { HealthCheck, HealthCheckOf, HealthStatus } from './Health.js';
export { retentionCutoffs, emptyPruneReport } from './Retention.js';
export { RetentionLoop } from './RetentionLoop.js';
export type { RetentionLoopSettings } from './RetentionLoop.js';
export type { PruneOptions, PruneReport, Retention, RetentionDays } from './Retention.js';
export { lastOnly, nextMicros } from './CollectionStore.js';
export type {
  CollectionObject,
  CollectionObjectInput,
  CollectionObjectQuery,
  CollectionPage,
  CollectionStore,
  SharedCollection,
  SharedCollectionInput,
  VersionMatch,
} from './CollectionStore.js';
export { checkName, normalizeWatch, conditionKey, watchHitKey } from './WatchStore.js';
export type { Watch, WatchCondition, WatchHit, WatchHitQuery, WatchNotify, WatchStore } from './WatchStore.js';
export { HUNT_LIMITS } from './HuntReader.js';
export type {
  BehaviourLine,
  FileRollup,
  HuntReader,
  NameCount,
  PivotStats,
  PivotSummary,
  RelatedBehaviours,
  SeenValue,
  Timeline,
} from './HuntReader.js';
export { rollupFile } from './rollupFile.js';
export { doneThrough, ingestFreshness, type IngestFreshness } from './ingestFreshness.js';
export { contactedOf, hostName, hostOfUrl, type Contacted } from './contacted.js';
export type { ArtefactLog, ArtefactRecord } from './ArtefactLog.js';
export {
  openStore,
  openElasticsearch,
  isElasticsearchSpec,
  otherStoreRefusal,
  storeFileIdentity,
  storeIdentity,
  storeWouldBeCreated,
} from './openStore.js';
export type { StoreAccess, StoreSettings } from './openStore.js';
export * from './sqlite/index.js';
export * from './elasticsearch/index.js';
export { shownStoreSpec } from './shownStoreSpec.js';
