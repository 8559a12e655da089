/**
 * Index lifecycle of the behaviour partitions: one index per UTC day of last_modification_date,
 * aged by ILM from the date in its name (`index.lifecycle.parse_origination_date`), so a day
 * backfilled months later is deleted exactly when it would have been had it been written live.
 */
import type { RetentionDays } from '../Retention.js';
import type { EsNames } from './names.js';

/**
 * `min_age` of the delete phase. ILM ages a day index from the start of its day, and its last
 * behaviour is kept `days` after its own date: the index goes when the whole day is past
 * retention, one day after `days`. Writers skip what is already past retention, so an index
 * ILM removed is never written again (bar clock skew).
 */
export function deleteMinAge(days: number): string {
  return `${days + 1}d`;
}

/**
 * The ILM policy body: a hot phase without rollover (the day bounds an index's size) and, with
 * retention on, a delete phase. Re-PUT by every setup, so changing `retention.days` applies to
 * every existing day index too.
 */
export function behaviourPolicy(days: RetentionDays | undefined, meta: Record<string, unknown>): Record<string, unknown> {
  const phases: Record<string, unknown> = {
    // recovered before the bookkeeping indices after a restart: they are what hunters search
    hot: { min_age: '0ms', actions: { set_priority: { priority: 100 } } },
  };
  if (typeof days === 'number') phases.delete = { min_age: deleteMinAge(days), actions: { delete: {} } };
  return { policy: { _meta: meta, phases } };
}

/**
 * What the index template adds to every day index: the policy and the age from the name (on a
 * cluster with ILM), and the read alias.
 */
export function partitionTemplate(n: EsNames, ilm = true): Record<string, unknown> {
  return {
    settings: ilm ? { index: { lifecycle: { name: n.policy, parse_origination_date: true } } } : {},
    aliases: { [n.alias]: {} },
  };
}

/**
 * The body creating the undated partition: outside ILM (its name carries no date, which
 * `parse_origination_date` would refuse, and ageing it from its creation would delete the
 * alias's anchor), behind the alias but never its write index.
 */
export function undatedPartitionBody(n: EsNames, ilm = true): Record<string, unknown> {
  return {
    // empty on a new deployment: one shard is plenty
    settings: { index: { number_of_shards: 1, ...(ilm ? { lifecycle: { name: '', parse_origination_date: false } } : {}) } },
    aliases: { [n.alias]: { is_write_index: false } },
  };
}
