export { PIVOT_KINDS, pivotKey, invalidDocReason, withSerialized, serializedOf } from './Sink.js';
export type { Sink, ItemResult, PivotKind } from './Sink.js';
export { SqliteSink } from './SqliteSink.js';
export {
  ElasticsearchSink,
  ElasticsearchDeadLetterStore,
  ElasticsearchBatchLog,
  openElasticsearchStore,
  createElasticsearchClient,
  parseElasticsearchSpec,
  setupElasticsearch,
  setupPlan,
  esNames,
  kibanaNdjson,
  importKibanaObjects,
  importKibanaNdjson,
  classifyItem,
  classifyRequestError,
  PIVOT_FIELDS,
} from './elasticsearch/index.js';
export type {
  ElasticsearchStore,
  ElasticsearchStoreOptions,
  SetupOptions,
  SetupResult,
  SetupStep,
  KibanaAuth,
} from './elasticsearch/index.js';
