import type { Client } from '@elastic/elasticsearch';
import type { Config } from '../../config/index.js';
import { healthCheckOf as checkOf, type HealthCheck as CheckResult } from '../Health.js';
import { flatSettings } from './flatSettings.js';
import type { SetupStep } from './setup.js';
import { locatorState } from './locator.js';
import type { EsNames } from './names.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const SETUP_FIX = 'run `sandtrail es setup` with this configuration (same retention.days and index prefix)';

/** The delete phase's `min_age` of a policy body (`{policy: {phases}}`), or null without one. */
function deleteAge(body: unknown): string | null {
  const policy = isObj(body) && isObj(body.policy) ? body.policy : {};
  const phases = isObj(policy.phases) ? policy.phases : {};
  const del = isObj(phases.delete) ? phases.delete : undefined;
  return del ? String(del.min_age ?? '0ms') : null;
}

/**
 * The lifecycle policy of the daily behaviour indices exists and deletes them when this
 * configuration's `retention.days` says: a policy set up with another retention deletes days
 * too early (data lost to hunters) or too late (the disk fills).
 */
export async function checkLifecycle(client: Client, steps: readonly SetupStep[], signal: AbortSignal): Promise<CheckResult> {
  const c = checkOf('store.lifecycle', 'Elasticsearch lifecycle policy');
  const step = steps.find((s) => s.path.startsWith('/_ilm/policy/'));
  if (!step) return c.pass('no ILM on this cluster: sandtrail deletes expired day indices itself (index workers, prune)');
  const name = decodeURIComponent(step.path.slice('/_ilm/policy/'.length));
  let installed: unknown;
  try {
    installed = ((await client.ilm.getLifecycle({ name }, { signal })) as Record<string, unknown>)[name];
  } catch (err) {
    if ((err as { meta?: { statusCode?: number } }).meta?.statusCode === 404) installed = undefined;
    else throw err;
  }
  if (!installed) return c.fail(`lifecycle policy ${name} is missing: daily behaviour indices are never deleted`, SETUP_FIX);
  const want = deleteAge(step.body);
  const have = deleteAge(installed);
  if (want === have) {
    return c.pass(want === null ? `${name}: retention off, nothing is deleted` : `${name}: a day index is deleted ${want} after its date`);
  }
  const say = (age: string | null): string => (age === null ? 'never' : `${age} after its date`);
  return c.fail(`${name} deletes a day index ${say(have)}, retention.days here means ${say(want)}`, SETUP_FIX);
}

const UNITS: Readonly<Record<string, number>> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4 };

/** Bytes of a size with its unit as Elasticsearch writes them (`30gb`, `500mb`; binary multiples). */
export function sizeBytes(size: string): number {
  const m = /^(\d+(?:\.\d+)?)(b|kb|mb|gb|tb)$/.exec(size);
  if (!m) throw new TypeError(`not a size with its unit: ${size}`);
  return Number(m[1]) * (UNITS[m[2] as string] as number);
}

const gb = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(1)} GB`;

/**
 * Every behaviour index keeps its primary shards under `elasticsearch.maxPrimaryShardSize`
 * (a shard's share: the index's primary store over its shard count). A day past it says the feed
 * outgrew `elasticsearch.shards`: new days take a new shard count from the template, so the fix
 * is the setting, with the count the largest day needs.
 */
export async function checkShardSizes(
  client: Client,
  alias: string,
  es: Config['elasticsearch'],
  signal: AbortSignal,
): Promise<CheckResult> {
  const c = checkOf('store.shards', 'Elasticsearch primary shard sizes');
  const limit = sizeBytes(es.maxPrimaryShardSize);
  let stats: { indices?: Record<string, { primaries?: { store?: { size_in_bytes?: number } } }> };
  try {
    stats = (await client.indices.stats({ index: alias, metric: 'store' }, { signal })) as typeof stats;
  } catch (err) {
    // no alias yet: the setup check says what to run
    if ((err as { meta?: { statusCode?: number } }).meta?.statusCode === 404) return c.pass(`no behaviour index behind ${alias} yet`);
    throw err;
  }
  const settings = (await client.indices.getSettings({ index: alias, flat_settings: true }, { signal })) as Record<
    string,
    { settings?: Record<string, unknown> }
  >;
  let largest = { index: '', bytes: 0, shards: 1, total: 0 };
  const over: string[] = [];
  for (const [index, s] of Object.entries(stats.indices ?? {})) {
    const total = s.primaries?.store?.size_in_bytes ?? 0;
    const shards = Math.max(1, Number(flatSettings(settings[index]?.settings)['index.number_of_shards'] ?? 1));
    const bytes = total / shards;
    if (bytes > largest.bytes) largest = { index, bytes, shards, total };
    if (bytes > limit) over.push(`${index} (${gb(bytes)} per primary shard, ${shards} shard(s))`);
  }
  if (largest.index === '') return c.pass(`no behaviour index behind ${alias} yet`);
  if (over.length === 0) {
    return c.pass(`largest primary shard ${gb(largest.bytes)} in ${largest.index}, under ${es.maxPrimaryShardSize}`);
  }
  const need = Math.ceil(largest.total / limit);
  return c.warn(
    `primary shards past ${es.maxPrimaryShardSize}: ${over.join(', ')}`,
    `set elasticsearch.shards to ${Math.max(need, es.shards + 1)} or more and run sandtrail es setup: new days take it (the largest day holds ${gb(largest.total)} of primaries)`,
  );
}

/**
 * The locator covers every stored copy: until es setup has filled the one of a store from before
 * it, every write looks every behaviour up in every partition, a cost that grows with the days kept.
 * A missing locator is the setup check's finding; nothing is said of it here.
 */
export async function checkLocator(client: Client, n: EsNames, signal: AbortSignal): Promise<CheckResult[]> {
  const c = checkOf('store.locator', 'Elasticsearch locator');
  const state = await locatorState(client, n, { signal });
  if (state === 'missing') return [];
  if (state === 'complete') return [c.pass(`${n.locator} complete: a write looks a behaviour up only in the partitions it was written to`)];
  return [
    c.warn(
      `${n.locator} is not yet filled: every write looks every behaviour up in every partition, a cost that grows with the days kept`,
      'run `sandtrail es setup`: it records every stored copy in the locator',
    ),
  ];
}
