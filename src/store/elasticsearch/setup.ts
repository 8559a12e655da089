import type { Config } from '../../config/index.js';
import type { Client } from '@elastic/elasticsearch';
import { errorType, storeFailure } from './classify.js';
import { SandtrailError } from '../../errors/index.js';
import type { RetentionDays } from '../Retention.js';
import {
  MAPPING_VERSION,
  batchMappings,
  behaviourMappings,
  behaviourSettings,
  hashAnalysis,
  deadLetterMappings,
  smallIndexSettings,
  type BehaviourIndexSettings,
  type Replicas,
} from './mapping.js';
import { artefactMappings } from './artefactMapping.js';
import { behaviourPolicy, deleteMinAge, partitionTemplate, undatedPartitionBody } from './lifecycle.js';
import { esNames } from './names.js';
import { clusterHasIlm } from './ilm.js';
import { repairPartitions } from './repairPartitions.js';
import { completeLocator, locatorMappings, locatorSettings } from './locator.js';
import { privateFileMappings, privateFileSettings } from './privateFileMapping.js';
import { collectionMappings, collectionObjectMappings, watchHitMappings, watchMappings } from './watchMapping.js';

export interface SetupOptions extends BehaviourIndexSettings {
  prefix?: string;
  /** Return (and let the caller print) the requests without sending anything. */
  dryRun?: boolean;
  /** Replicas of the dead-letter, batch-log and artefact indices (default: same as the behaviours). */
  bookkeepingReplicas?: Replicas;
  /** Days a behaviour is kept after its last_modification_date (the ILM delete phase), or off (default). */
  retentionDays?: RetentionDays;
  /**
   * A writer's own setup: the deployment's choices (the lifecycle policy's retention, the shard
   * and replica settings) are created when missing, never changed, unless they were written by an
   * older version. Only `es setup` changes them: a backfill run with another configuration must
   * not turn retention off for the whole cluster.
   */
  keepDeployment?: boolean;
  /**
   * Whether the cluster has ILM: without it the plan has no lifecycle policy and the day indices no
   * lifecycle settings (sandtrail's retention deletes expired days). setupElasticsearch asks the
   * cluster when unset; a dry run plans with ILM.
   */
  ilm?: boolean;
  /**
   * Record every stored copy in the locator of a store that predates it (es setup). A writer's own
   * setup does not: its writes look every id up in every partition until es setup has.
   */
  fillLocator?: boolean;
  /** Progress of that filling: copies recorded so far. */
  onLocatorProgress?: (done: number) => void;
}

/**
 * One request of the setup. `when` says under which condition it is sent: `always` (idempotent
 * PUT of a template or mapping), `missing` (only when `target` does not exist yet) or `exists`
 * (only when it does).
 */
export interface SetupStep {
  method: 'PUT' | 'POST';
  path: string;
  body: Record<string, unknown>;
  when: 'always' | 'missing' | 'exists';
  /** The alias or index whose existence `when` refers to. */
  target?: string;
  /** A deployment's choice (SetupOptions.keepDeployment): the policy or the settings component template of that name. */
  deployment?: { kind: 'policy' | 'component'; name: string };
  description: string;
}

export interface SetupResult {
  dryRun: boolean;
  prefix: string;
  alias: string;
  /** Every request of the plan, in order (what `--dry-run` prints). */
  steps: SetupStep[];
  /** Descriptions of the steps actually sent (empty in a dry run). */
  applied: string[];
  /** Indices this run created. */
  created: string[];
  /** Descriptions of the deployment's choices found in place and kept (keepDeployment). */
  kept: string[];
  /** Whether the plan used ILM (false: the cluster has none; retention is sandtrail's own). */
  ilm: boolean;
}

const PRIORITY = 200;

/** The index layout and retention `es setup` applies, from the validated configuration. */
export function setupOptionsOf(config: Pick<Config, 'elasticsearch' | 'retention'>): SetupOptions {
  const es = config.elasticsearch;
  return {
    prefix: es.indexPrefix,
    shards: es.shards,
    replicas: es.replicas,
    refreshInterval: es.refreshInterval,
    totalFieldsLimit: es.totalFieldsLimit,
    retentionDays: config.retention.days,
  };
}

/** The requests that set up (or upgrade) the indices of one prefix; pure. */
export function setupPlan(options: SetupOptions = {}): SetupStep[] {
  const n = esNames(options.prefix);
  const meta = { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION };
  const mappings = behaviourMappings();
  const small = smallIndexSettings(options.bookkeepingReplicas ?? options.replicas);
  const ilm = options.ilm !== false;
  const policy: SetupStep = {
    method: 'PUT',
    path: `/_ilm/policy/${n.policy}`,
    body: behaviourPolicy(options.retentionDays, meta),
    when: 'always',
    deployment: { kind: 'policy', name: n.policy },
    description:
      typeof options.retentionDays === 'number'
        ? `lifecycle policy ${n.policy} (a day index is deleted ${deleteMinAge(options.retentionDays)} after its date)`
        : `lifecycle policy ${n.policy} (retention off: nothing is deleted)`,
  };
  return [
    {
      method: 'PUT',
      path: `/_component_template/${n.settingsComponent}`,
      body: { template: { settings: behaviourSettings(options) }, version: MAPPING_VERSION, _meta: meta },
      when: 'always',
      deployment: { kind: 'component', name: n.settingsComponent },
      description: `component template ${n.settingsComponent}`,
    },
    {
      method: 'PUT',
      path: `/_component_template/${n.mappingsComponent}`,
      // a component template must be valid alone: the normalizer its mappings use is defined in it too
      body: { template: { settings: { analysis: hashAnalysis() }, mappings }, version: MAPPING_VERSION, _meta: meta },
      when: 'always',
      description: `component template ${n.mappingsComponent}`,
    },
    ...(ilm ? [policy] : []),
    {
      method: 'PUT',
      path: `/_index_template/${n.indexTemplate}`,
      body: {
        index_patterns: [n.pattern],
        composed_of: [n.settingsComponent, n.mappingsComponent],
        template: partitionTemplate(n, ilm),
        priority: PRIORITY,
        version: MAPPING_VERSION,
        _meta: { ...meta, description: 'sandtrail behaviour reports: one index per day of last_modification_date, read through the alias' },
      },
      when: 'always',
      description: `index template ${n.indexTemplate} for ${n.pattern} (${ilm ? `lifecycle ${n.policy}` : 'no ILM: sandtrail deletes expired days'}, read alias ${n.alias})`,
    },
    {
      method: 'PUT',
      path: `/${n.firstIndex}`,
      body: undatedPartitionBody(n, ilm),
      when: 'missing',
      target: n.alias,
      description: `index ${n.firstIndex} with read alias ${n.alias}`,
    },
    {
      method: 'PUT',
      path: `/${n.alias}/_mapping`,
      body: { dynamic: mappings.dynamic, _meta: mappings._meta, properties: mappings.properties },
      when: 'exists',
      target: n.alias,
      description: `mapping upgrade of the indices behind ${n.alias} (additive)`,
    },
    ...bookkeepingSteps(n.deadLettersTemplate, n.deadLetters, deadLetterMappings(), small, meta),
    ...bookkeepingSteps(n.batchesTemplate, n.batches, batchMappings(), small, meta),
    // private file reports: data, not bookkeeping, so they follow the behaviours' shard layout
    ...bookkeepingSteps(n.privateFilesTemplate, n.privateFiles, privateFileMappings(), privateFileSettings(options), meta),
    // a few small records per report, read one report at a time: bookkeeping-sized
    ...bookkeepingSteps(n.artefactsTemplate, n.artefacts, artefactMappings(), small, meta),
    // watchlists: a handful of watches and the hits they record, bookkeeping-sized
    ...bookkeepingSteps(n.watchesTemplate, n.watches, watchMappings(), small, meta),
    ...bookkeepingSteps(n.watchHitsTemplate, n.watchHits, watchHitMappings(), small, meta),
    // shared (TAXII) collections: a few collections, the objects of their hits and saved exports
    ...bookkeepingSteps(n.collectionsTemplate, n.collections, collectionMappings(), small, meta),
    ...bookkeepingSteps(n.collectionObjectsTemplate, n.collectionObjects, collectionObjectMappings(), small, meta),
    // one small entry per behaviour, as many as the behaviours kept: the behaviours' primaries
    ...bookkeepingSteps(n.locatorTemplate, n.locator, locatorMappings(meta), locatorSettings(options), meta),
  ];
}

/**
 * The index template and the single index of one store outside the behaviour alias (dead
 * letters, batch log, private files, artefacts, watches and their hits).
 */
function bookkeepingSteps(
  template: string,
  index: string,
  mappings: Record<string, unknown>,
  settings: Record<string, unknown>,
  meta: Record<string, unknown>,
): SetupStep[] {
  return [
    {
      method: 'PUT',
      path: `/_index_template/${template}`,
      body: { index_patterns: [index], priority: PRIORITY, version: MAPPING_VERSION, template: { settings, mappings }, _meta: meta },
      when: 'always',
      description: `index template ${template}`,
    },
    { method: 'PUT', path: `/${index}`, body: {}, when: 'missing', target: index, description: `index ${index}` },
  ];
}

/**
 * The version of sandtrail that wrote a deployment's policy or settings component template
 * (its MAPPING_VERSION), 0 when one from before versions were kept, -1 when it is missing.
 */
async function deploymentVersion(client: Client, d: NonNullable<SetupStep['deployment']>): Promise<number> {
  try {
    if (d.kind === 'policy') {
      const found = await client.ilm.getLifecycle({ name: d.name });
      const meta = found[d.name]?.policy?._meta as { mapping_version?: unknown } | undefined;
      return typeof meta?.mapping_version === 'number' ? meta.mapping_version : 0;
    }
    const found = await client.cluster.getComponentTemplate({ name: d.name });
    const version = found.component_templates[0]?.component_template.version;
    return typeof version === 'number' ? version : found.component_templates.length > 0 ? 0 : -1;
  } catch (err) {
    if (errorType(err) === 'resource_not_found_exception' || (err as { meta?: { statusCode?: number } }).meta?.statusCode === 404)
      return -1;
    throw storeFailure(`es setup: reading ${d.kind === 'policy' ? 'lifecycle policy' : 'component template'} ${d.name}`, err);
  }
}

async function exists(client: Client, target: string, isAlias: boolean): Promise<boolean> {
  return isAlias ? client.indices.existsAlias({ name: target }) : client.indices.exists({ index: target });
}

/**
 * Creates or upgrades everything sandtrail needs in a cluster; safe to run any number of times
 * and from several processes at once. Templates and the lifecycle policy are PUT every time
 * (idempotent), the undated behaviours index is created with the read alias only when the alias
 * does not exist (a deployment from before daily partitions keeps its single index there, as the
 * undated partition), and existing indices get the current mapping (additive changes only; an
 * incompatible change fails loudly). Day indices created without the current template (by a
 * writer before this setup ran) are repaired: an empty one is deleted for the next write to
 * create again, one holding documents joins the alias and the policy. The single-index stores
 * (dead letters, batch log, private files, artefacts, watches, watch hits) get their template
 * every time and their index when it is missing.
 */
export async function setupElasticsearch(client: Client, options: SetupOptions = {}): Promise<SetupResult> {
  const n = esNames(options.prefix);
  let ilm = options.ilm ?? true;
  if (options.ilm === undefined && !options.dryRun) {
    try {
      ilm = await clusterHasIlm(client);
    } catch (err) {
      throw storeFailure('es setup: asking whether the cluster has ILM', err);
    }
  }
  const steps = setupPlan({ ...options, ilm });
  const result: SetupResult = {
    dryRun: options.dryRun === true,
    prefix: n.prefix,
    alias: n.alias,
    steps,
    applied: [],
    created: [],
    kept: [],
    ilm,
  };
  if (options.dryRun) return result;
  for (const step of steps) {
    if (options.keepDeployment && step.deployment && (await deploymentVersion(client, step.deployment)) >= MAPPING_VERSION) {
      result.kept.push(step.description);
      continue;
    }
    if (step.when !== 'always' && step.target) {
      // the mapping upgrade is pointless right after this run created the first index
      if (step.when === 'exists' && result.created.includes(n.firstIndex)) continue;
      const present = await exists(client, step.target, step.target === n.alias);
      if ((step.when === 'missing') === present) continue;
    }
    // strays join the alias before the mapping upgrade, which then reaches them too
    if (step.when === 'exists' && step.target === n.alias) result.applied.push(...(await repairPartitions(client, n, ilm)));
    try {
      await client.transport.request({ method: step.method, path: step.path, body: step.body });
      if (step.when === 'missing') result.created.push(step.path.slice(1));
    } catch (err) {
      if (errorType(err) === 'resource_already_exists_exception') {
        // another process won the race, or the first index exists without its alias
        if (step.target === n.alias && !(await exists(client, n.alias, true))) {
          await client.indices.updateAliases({ actions: [{ add: { index: n.firstIndex, alias: n.alias, is_write_index: false } }] });
        }
      } else if (errorType(err) === 'invalid_alias_name_exception') {
        throw new SandtrailError(
          'SINK_UNAVAILABLE',
          `cannot create the alias ${n.alias}: an index of that name exists (probably auto-created by a write before setup); reindex it into ${n.firstIndex} and delete it`,
          {},
          { cause: err },
        );
      } else {
        // typed and named (refused privileges, a block, a cluster gone), not the bare error type
        throw storeFailure(`es setup: ${step.description}`, err);
      }
    }
    result.applied.push(step.description);
  }
  try {
    result.applied.push(
      ...(await completeLocator(
        client,
        n,
        { managed_by: 'sandtrail', mapping_version: MAPPING_VERSION },
        {
          freshStore: result.created.includes(n.firstIndex),
          fill: options.fillLocator === true,
          ...(options.onLocatorProgress ? { onProgress: options.onLocatorProgress } : {}),
        },
      )),
    );
  } catch (err) {
    throw storeFailure(`es setup: locator ${n.locator}`, err);
  }
  return result;
}
