/**
 * Feed minutes: the `YYYYMMDDhhmm` UTC id every batch, job, dead letter and batch-log entry is
 * keyed by, and its arithmetic. A capability of its own so the feed, the queues and the store
 * backends share it without depending on each other.
 */
export { isMinuteId, minuteStartSeconds, minuteToMs, msToMinute, addMinutes, minuteRange } from './minute.js';
export type { MinuteId } from './minute.js';
