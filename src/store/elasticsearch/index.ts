export { ElasticsearchSink, runPool } from './ElasticsearchSink.js';
export type { ElasticsearchSinkOptions } from './ElasticsearchSink.js';
export { ElasticsearchHuntReader } from './ElasticsearchHuntReader.js';
export { ElasticsearchDeadLetterStore } from './ElasticsearchDeadLetterStore.js';
export type { EsBookkeepingOptions } from './ElasticsearchDeadLetterStore.js';
export { ElasticsearchBatchLog } from './ElasticsearchBatchLog.js';
export { ElasticsearchArtefactLog } from './ElasticsearchArtefactLog.js';
export { ElasticsearchWatchStore } from './ElasticsearchWatchStore.js';
export { ElasticsearchCollectionStore } from './ElasticsearchCollectionStore.js';
export { ElasticsearchPrivateFileStore } from './ElasticsearchPrivateFileStore.js';
export { ElasticsearchRetention } from './ElasticsearchRetention.js';
export type { EsRetentionOptions } from './ElasticsearchRetention.js';
export type { ElasticsearchPrivateFileStoreOptions } from './ElasticsearchPrivateFileStore.js';
export { setupElasticsearch, setupOptionsOf, setupPlan } from './setup.js';
export { SHARD_BUDGET_FIX, shardBudget, type ShardBudget } from './shardBudget.js';
export { elasticsearchHealth } from './health.js';
export { clusterVersion } from './ilm.js';
export { describeShard } from './clusterState.js';
export type { ElasticsearchHealthOptions } from './health.js';
export type { SetupOptions, SetupResult, SetupStep } from './setup.js';
export { openElasticsearchStore, createElasticsearchClient, parseElasticsearchSpec } from './openElasticsearchStore.js';
export type {
  ElasticsearchConnectionOptions,
  ElasticsearchStore,
  ElasticsearchStoreOptions,
  ParsedElasticsearchSpec,
} from './openElasticsearchStore.js';
export { esNames, isValidPrefix } from './names.js';
export { dayIndexName, dayOfIndex } from './partitions.js';
export { behaviourPolicy, deleteMinAge } from './lifecycle.js';
export type { EsNames } from './names.js';
export { PIVOT_FIELDS, MAPPING_VERSION, behaviourMappings, behaviourSettings, deadLetterMappings, batchMappings } from './mapping.js';
export { privateFileMappings, privateFileSettings } from './privateFileMapping.js';
export { artefactMappings } from './artefactMapping.js';
export { watchMappings, watchHitMappings, collectionMappings, collectionObjectMappings } from './watchMapping.js';
export { ECS_ROOTS, ecsProjection, sourceBytes, sourceJson, stripProjection } from './project.js';
export { classifyItem, classifyRequestError } from './classify.js';
export { kibanaObjects, kibanaNdjson } from './kibana.js';
export { importKibanaObjects, importKibanaNdjson, validateNdjson } from './importKibana.js';
export type { KibanaAuth, KibanaImportOptions, KibanaImportResult } from './importKibana.js';
