export { PipelineMetrics } from './PipelineMetrics.js';
export type { MetricEvent, SharedStateReader } from './PipelineMetrics.js';
export { record, processMetrics, forwardMetrics, flushMetrics, applyMetrics } from './record.js';
