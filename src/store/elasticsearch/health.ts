import type { Client } from '@elastic/elasticsearch';
import type { Config } from '../../config/index.js';
import { messageOf } from '../../errors/index.js';
import { healthCheckOf as checkOf, type HealthCheck as CheckResult } from '../Health.js';
import { flatSettings } from './flatSettings.js';
import { checkLifecycle, checkLocator, checkShardSizes } from './healthPartitions.js';
import { esNames } from './names.js';
import type { ElasticsearchStore } from './openElasticsearchStore.js';
import { setupOptionsOf, setupPlan, type SetupStep } from './setup.js';
import { clusterHasIlm, clusterVersion } from './ilm.js';
import { SHARD_BUDGET_FIX, shardBudget } from './shardBudget.js';
import { describeShard, unassignedShards } from './clusterState.js';

export interface ElasticsearchHealthOptions {
  /** Timeout of each request (the client does not retry). */
  timeoutMs: number;
  /** Aborted when doctor gives up on this check: requests in flight are cancelled. */
  signal: AbortSignal;
}

const SETUP_FIX = 'run `sandtrail es setup` (with the same --store / ELASTICSEARCH_URL and index prefix)';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function statusOf(err: unknown): number | undefined {
  const s = (err as { meta?: { statusCode?: unknown } }).meta?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

/** A refused request explained without echoing the request (its headers carry the credentials). */
function failure(err: unknown, spec: string): { detail: string; fix: string } {
  const status = statusOf(err);
  if (status === 401)
    return {
      detail: `${spec} refused the credentials (401)`,
      fix: 'set ELASTICSEARCH_API_KEY (or ELASTICSEARCH_USERNAME and ELASTICSEARCH_PASSWORD) to valid credentials',
    };
  if (status === 403)
    return {
      detail: `${spec}: the credentials lack a privilege (403): ${messageOf(err)}`,
      fix: 'grant the role the monitor cluster privilege',
    };
  const why = messageOf(err) || (err as Error).name || 'no reason given';
  return {
    detail: status === undefined ? `cannot reach ${spec}: ${why}` : `${spec} answered HTTP ${status}: ${why}`,
    fix: 'start the cluster or correct --store es:URL / ELASTICSEARCH_URL (ELASTICSEARCH_CA_FILE for a private CA)',
  };
}

/** Dotted paths of every mapped field (`pivots.behash`), recursing into object and nested fields. */
function fieldPaths(properties: unknown, prefix = ''): string[] {
  if (!isObj(properties)) return [];
  return Object.entries(properties).flatMap(([name, def]) => [
    `${prefix}${name}`,
    ...(isObj(def) ? fieldPaths(def.properties, `${prefix}${name}.`) : []),
  ]);
}

/** The mapped field paths of a template body (component or index template), sorted. */
function templateFields(body: Obj): string[] {
  const template = isObj(body.template) ? body.template : {};
  const mappings = isObj(template.mappings) ? template.mappings : {};
  return fieldPaths(mappings.properties).sort();
}

/** A template as installed (or undefined when absent). */
async function installedTemplate(client: Client, kind: 'component' | 'index', name: string, signal: AbortSignal): Promise<Obj | undefined> {
  try {
    if (kind === 'component') {
      const r = await client.cluster.getComponentTemplate({ name }, { signal });
      return r.component_templates.find((t) => t.name === name)?.component_template as unknown as Obj | undefined;
    }
    const r = await client.indices.getIndexTemplate({ name }, { signal });
    return r.index_templates.find((t) => t.name === name)?.index_template as unknown as Obj | undefined;
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}

interface Findings {
  missing: string[];
  outdated: string[];
  newer: string[];
  present: string[];
}

/**
 * Compares an installed template with what setup would PUT: its `version` (setup stamps
 * MAPPING_VERSION on every template) and, because a field can be added without that version
 * moving, the set of mapped field paths.
 */
function compareTemplate(what: string, expected: Obj, installed: Obj | undefined, f: Findings): void {
  if (!installed) return void f.missing.push(what);
  const want = typeof expected.version === 'number' ? expected.version : 0;
  const have = typeof installed.version === 'number' ? installed.version : undefined;
  if (have !== undefined && have > want) return void f.newer.push(`${what} (version ${have}, this sandtrail's ${want})`);
  if (have === undefined || have < want) return void f.outdated.push(`${what} (version ${have ?? 'none'}, expected ${want})`);
  const [a, b] = [templateFields(expected), templateFields(installed)];
  if (a.length !== b.length || a.some((p, i) => p !== b[i])) return void f.outdated.push(`${what} (mapped fields differ)`);
  f.present.push(what);
}

/** Every object of the setup plan exists, and the templates are the ones this sandtrail would install. */
async function checkSetup(client: Client, steps: SetupStep[], alias: string, signal: AbortSignal): Promise<CheckResult> {
  const c = checkOf('store.setup', 'Elasticsearch setup');
  const f: Findings = { missing: [], outdated: [], newer: [], present: [] };
  for (const step of steps) {
    const template = /^\/_(component|index)_template\/(.+)$/.exec(step.path);
    if (template && step.when === 'always') {
      const kind = template[1] as 'component' | 'index';
      const name = decodeURIComponent(template[2] as string);
      compareTemplate(`${kind} template ${name}`, step.body, await installedTemplate(client, kind, name, signal), f);
    } else if (step.when === 'missing' && step.target) {
      // the first behaviours index is created with the alias: the alias is what must exist
      const isAlias = step.target === alias;
      const exists = isAlias
        ? await client.indices.existsAlias({ name: step.target }, { signal })
        : await client.indices.exists({ index: step.target }, { signal });
      (exists ? f.present : f.missing).push(isAlias ? `read alias ${step.target}` : `index ${step.target}`);
    }
    // `exists` steps (the additive mapping upgrade of existing indices) create nothing to look for
  }
  if (f.missing.length) return c.fail(`missing: ${[...f.missing, ...f.outdated].join(', ')}`, SETUP_FIX);
  if (f.outdated.length) return c.fail(`outdated: ${f.outdated.join(', ')}`, SETUP_FIX);
  if (f.newer.length)
    return c.warn(`installed by a newer sandtrail: ${f.newer.join(', ')}`, 'upgrade this sandtrail to the version that ran es setup');
  return c.pass(`${f.present.length} objects present and current (templates, lifecycle policy, read alias ${alias}, bookkeeping indices)`);
}

const BLOCKS = ['read_only_allow_delete', 'read_only', 'write'] as const;

/**
 * The daily partitions against the cluster's shard limit, said before it is reached: a warning
 * when the full retention window would not fit (or fits tightly, or retention is off), a failure
 * when new days are refused within a week.
 */
async function checkShardBudget(client: Client, config: Config, signal: AbortSignal): Promise<CheckResult> {
  const c = checkOf('store.shards', 'Elasticsearch shard budget');
  const es = config.elasticsearch;
  const b = await shardBudget(client, {
    pattern: esNames(es.indexPrefix).pattern,
    shards: es.shards,
    replicas: es.replicas,
    retentionDays: config.retention.days,
    signal,
  });
  if (b.daysLeft < 7 && b.verdict === 'exceeds') return c.fail(b.text, SHARD_BUDGET_FIX);
  return b.verdict === 'fits' ? c.pass(b.text) : c.warn(b.text, SHARD_BUDGET_FIX);
}

/** `; unassigned: <index>[<shard>] primary|replica (<reason>: <details>), ...` for up to three of sandtrail's shards, or ''. */
async function unassignedText(client: Client, prefix: string, signal: AbortSignal): Promise<string> {
  const { shown, total } = await unassignedShards(client, prefix, { signal });
  if (total === 0) return '';
  return `; unassigned: ${shown.map(describeShard).join(', ')}${total > shown.length ? ` and ${total - shown.length} more` : ''}`;
}

/**
 * The cluster's health, and the write blocks on sandtrail's indices: the flood-stage disk
 * watermark puts `read_only_allow_delete` on them, an operator `write` or `read_only`; either
 * stops every write, so it fails the check with the fix.
 */
async function checkHealth(client: Client, prefix: string, signal: AbortSignal): Promise<CheckResult[]> {
  const h = checkOf('store.health', 'Elasticsearch cluster health');
  const health = await client.cluster.health({}, { signal });
  const status = String(health.status).toLowerCase();
  const nodes = `${health.number_of_nodes} node(s) (${health.number_of_data_nodes} data)`;
  // which of sandtrail's shards are unassigned, and why (a node that left is named by its id)
  const where = status === 'green' ? '' : await unassignedText(client, prefix, signal);
  const healthResult =
    status === 'red'
      ? h.fail(
          `cluster ${health.cluster_name} is red with ${nodes}: ${health.unassigned_shards} unassigned shard(s)${where}`,
          'start the missing node(s); see GET _cluster/allocation/explain',
        )
      : status === 'yellow'
        ? h.warn(
            `cluster ${health.cluster_name} is yellow with ${nodes}: ${health.unassigned_shards} replica shard(s) unassigned${where}`,
            health.number_of_data_nodes > 1
              ? 'start the missing node, or wait while the replicas are allocated again'
              : 'add a node, or set elasticsearch.replicas to auto (0 on a single node)',
          )
        : h.pass(`cluster ${health.cluster_name} is green with ${nodes}`);
  const b = checkOf('store.blocks', 'Elasticsearch index blocks');
  const settings = (await client.indices.getSettings(
    { index: `${prefix}-*`, flat_settings: true, allow_no_indices: true, expand_wildcards: 'all' },
    { signal },
  )) as Record<string, { settings?: Record<string, unknown> }>;
  const blocked: string[] = [];
  let diskFull = false;
  for (const [index, s] of Object.entries(settings)) {
    for (const block of BLOCKS) {
      if (String(flatSettings(s.settings)[`index.blocks.${block}`]) !== 'true') continue;
      blocked.push(`${index} (${block})`);
      diskFull ||= block === 'read_only_allow_delete';
    }
  }
  const blocksResult =
    blocked.length === 0
      ? b.pass(`no write block on ${Object.keys(settings).length} index(es) ${prefix}-*`)
      : b.fail(
          `writes are blocked: ${blocked.join(', ')}${diskFull ? ' (disk full: the flood-stage disk watermark was exceeded)' : ''}`,
          diskFull
            ? 'free disk space on the data nodes; Elasticsearch lifts read_only_allow_delete once disk use falls below the high watermark'
            : `remove the block: PUT ${prefix}-*/_settings {"index.blocks.write": null, "index.blocks.read_only": null}`,
        );
  return [healthResult, blocksResult, await checkWatermarks(client, signal)];
}

/**
 * Disk use of the data nodes against the cluster's disk watermarks: above the high one shards
 * move away; at the flood stage every index with a shard on the node becomes read-only and every
 * write fails. Watermarks set as free bytes instead of percentages are not compared.
 */
async function checkWatermarks(client: Client, signal: AbortSignal): Promise<CheckResult> {
  const d = checkOf('store.watermarks', 'Elasticsearch disk watermarks');
  let rows: { node?: string | null; 'disk.percent'?: string | null }[];
  let all: Record<string, unknown>;
  try {
    const [alloc, s] = await Promise.all([
      client.cat.allocation({ format: 'json' }, { signal }),
      client.cluster.getSettings({ include_defaults: true, flat_settings: true }, { signal }),
    ]);
    rows = alloc as typeof rows;
    all = { ...flatSettings(s.defaults), ...flatSettings(s.persistent), ...flatSettings(s.transient) };
  } catch (err) {
    if (statusOf(err) === 403)
      return d.warn(`cannot read disk use: ${messageOf(err)}`, 'check with credentials holding the monitor cluster privilege');
    throw err;
  }
  const percent = (k: string): number | undefined => {
    const m = /^(\d+(?:\.\d+)?)%$/.exec(String(all[`cluster.routing.allocation.disk.watermark.${k}`] ?? ''));
    return m ? Number(m[1]) : undefined;
  };
  const [high, flood] = [percent('high'), percent('flood_stage')];
  const nodes = rows
    .filter((r) => r.node && r.node !== 'UNASSIGNED' && r['disk.percent'] != null)
    .map((r) => ({ node: String(r.node), used: Number(r['disk.percent']) }));
  if (high === undefined || flood === undefined)
    return d.pass(`${nodes.length} data node(s); the watermarks are set in bytes: not compared`);
  const list = (ns: typeof nodes): string => ns.map((n) => `${n.node} ${n.used}%`).join(', ');
  const flooded = nodes.filter((n) => n.used >= flood);
  if (flooded.length > 0)
    return d.fail(
      `disk full: ${list(flooded)} at or above the flood-stage watermark (${flood}%): indices with a shard there are read-only`,
      'free disk space on those nodes or add nodes; Elasticsearch lifts the block once disk use falls below the high watermark',
    );
  const highs = nodes.filter((n) => n.used >= high);
  if (highs.length > 0)
    return d.warn(`${list(highs)} above the high disk watermark (${high}%); writes stop at ${flood}%`, 'free disk space or add nodes');
  const fullest = Math.max(0, ...nodes.map((n) => n.used));
  return d.pass(`disk use at most ${fullest}% on ${nodes.length} data node(s) (high watermark ${high}%, flood stage ${flood}%)`);
}

/**
 * The Elasticsearch store's checks: the cluster answers, runs 8.x or 9.x, and holds everything
 * `sandtrail es setup` installs, current. Only reads; never runs the setup. The caller opens the
 * store (bounded: no retries, a short timeout) and closes it.
 */
export async function elasticsearchHealth(
  store: ElasticsearchStore,
  config: Config,
  o: ElasticsearchHealthOptions,
): Promise<CheckResult[]> {
  const es = config.elasticsearch;
  const c = checkOf('store', 'Store (Elasticsearch)');
  let version: string;
  try {
    version = await clusterVersion(store.client, { signal: o.signal });
  } catch (err) {
    const { detail, fix } = failure(err, store.spec);
    return [c.fail(detail, fix)];
  }
  const major = Number(/^(\d+)\./.exec(version)?.[1]);
  if (major !== 8 && major !== 9) {
    return [c.fail(`${store.spec} runs Elasticsearch ${version}; sandtrail supports 8.x and 9.x`, 'upgrade the cluster to 8.x or 9.x')];
  }
  const result = c.pass(`Elasticsearch ${version} at ${store.spec}`);
  const n = esNames(es.indexPrefix);
  try {
    const steps = setupPlan({ ...setupOptionsOf(config), ilm: await clusterHasIlm(store.client, o.signal) });
    return [
      result,
      await checkSetup(store.client, steps, n.alias, o.signal),
      await checkLifecycle(store.client, steps, o.signal),
      ...(await checkLocator(store.client, n, o.signal)),
      ...(await checkHealth(store.client, es.indexPrefix, o.signal)),
      await checkShardSizes(store.client, n.alias, es, o.signal),
      await checkShardBudget(store.client, config, o.signal),
    ];
  } catch (err) {
    const { detail, fix } = failure(err, store.spec);
    const s = checkOf('store.setup', 'Elasticsearch setup');
    // writers with elasticsearch.setup=manual need no template privileges: not being able to look is no failure
    return [
      result,
      statusOf(err) === 403
        ? s.warn(`cannot read the setup: ${detail}`, `check with the credentials that ran es setup`)
        : s.fail(detail, fix),
    ];
  }
}
