import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../../config/index.js';
import { SandtrailError } from '../../errors/index.js';
import { readFile } from 'node:fs/promises';
import {
  esNames,
  importKibanaNdjson,
  kibanaNdjson,
  setupElasticsearch,
  setupOptionsOf,
  setupPlan,
  SHARD_BUDGET_FIX,
  shardBudget,
  type KibanaAuth,
  type SetupStep,
} from '../../store/index.js';
import { isElasticsearchSpec, openElasticsearch } from '../../store/index.js';
import { writeOut, type CliContext } from '../context.js';
import { packageRoot } from '../packageRoot.js';

const CONDITION: Record<SetupStep['when'], (s: SetupStep) => string> = {
  always: () => '',
  missing: (s) => `# only when ${s.target} does not exist\n`,
  exists: (s) => `# only when ${s.target} exists\n`,
};

/** Dev Tools console syntax: paste-able into Kibana as is. */
function consoleText(steps: readonly SetupStep[]): string {
  return steps
    .map((s) => `# ${s.description}\n${CONDITION[s.when](s)}${s.method} ${s.path}\n${JSON.stringify(s.body, null, 2)}\n`)
    .join('\n');
}

/** `sandtrail es setup`: create or upgrade the templates, the lifecycle policy, the read alias and the bookkeeping indices. */
export async function esSetupCommand(o: { dryRun?: boolean; json?: boolean }, ctx: CliContext): Promise<number> {
  const options = setupOptionsOf(ctx.config);
  if (o.dryRun) {
    const steps = setupPlan(options);
    await writeOut(o.json ? `${JSON.stringify(steps, null, 2)}\n` : `${consoleText(steps)}\n# (dry run: nothing was sent)\n`);
    return 0;
  }
  if (!isElasticsearchSpec(ctx.config.store)) {
    throw new SandtrailError('USAGE', 'es setup needs an Elasticsearch store: --store es:URL or ELASTICSEARCH_URL');
  }
  // setup is how a layout the cluster cannot hold gets changed: it warns instead of refusing
  const store = openElasticsearch(ctx.config.store, ctx.config, { layoutCheck: false });
  try {
    // refused credentials or a cluster gone: one typed line in seconds, before any step
    await store.check();
    // a store from before the locator: every stored copy is recorded in it (progress on stderr)
    let shown = 0;
    const result = await setupElasticsearch(store.client, {
      ...options,
      fillLocator: true,
      onLocatorProgress: (done) => {
        if (done - shown < 100_000) return;
        shown = done;
        ctx.log.info({ recorded: done }, `locator: ${done} stored behaviour copies recorded`);
      },
    });
    const es = ctx.config.elasticsearch;
    const shards = await shardBudget(store.client, {
      pattern: esNames(es.indexPrefix).pattern,
      shards: es.shards,
      replicas: es.replicas,
      retentionDays: ctx.config.retention.days,
    });
    if (o.json) {
      const { text, verdict, limit, open, perDay, atFull, daysLeft } = shards;
      const budget = { verdict, text, limit, open, perDay, atFull, daysLeft };
      await writeOut(
        `${JSON.stringify({ alias: result.alias, applied: result.applied, created: result.created, ilm: result.ilm, shards: budget })}\n`,
      );
    } else {
      for (const a of result.applied) await writeOut(`applied  ${a}\n`);
      await writeOut(
        result.created.length ? `created  ${result.created.join(', ')}\n` : `created  nothing (the alias ${result.alias} exists)\n`,
      );
      if (!result.ilm) {
        await writeOut(
          'note     this cluster has no index lifecycle management: no policy was set up; expired day indices are deleted by sandtrail (index workers, prune)\n',
        );
      }
      await writeOut(
        `${shards.verdict === 'fits' ? 'shards  ' : 'warning '} ${shards.text}${shards.verdict === 'fits' ? '' : `: ${SHARD_BUDGET_FIX}`}\n`,
      );
      await writeOut(`ready: read alias ${result.alias} over the daily behaviour indices on ${store.spec}\n`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

function kibanaAuth(config: Config): KibanaAuth {
  const k = config.kibana;
  const es = config.elasticsearch;
  if (k.apiKey) return { apiKey: k.apiKey };
  if (k.username) return { username: k.username, password: k.password ?? '' };
  if (es.apiKey) return { apiKey: es.apiKey };
  if (es.username) return { username: es.username, password: es.password ?? '' };
  return undefined;
}

/** The shipped NDJSON for the default prefix; generated for any other prefix; `from` says which, as a phrase. */
function savedObjects(config: Config, file: string | undefined): { text: Promise<string>; from: string } {
  if (file) return { text: readFile(file, 'utf8'), from: `from ${file}` };
  const prefix = config.elasticsearch.indexPrefix;
  const shipped = join(packageRoot(), 'kibana', 'sandtrail.ndjson');
  if (prefix === 'sandtrail' && existsSync(shipped)) {
    return { text: readFile(shipped, 'utf8'), from: `from ${shipped}` };
  }
  return { text: Promise.resolve(kibanaNdjson(prefix)), from: `generated for index prefix ${prefix}` };
}

/** `sandtrail kibana import`: load the data views, saved searches and dashboard into Kibana. */
export async function kibanaImportCommand(
  o: { url?: string; file?: string; space?: string; dryRun?: boolean; json?: boolean },
  ctx: CliContext,
): Promise<number> {
  const { text, from } = savedObjects(ctx.config, o.file);
  let ndjson: string;
  try {
    ndjson = await text;
  } catch (err) {
    throw new SandtrailError('USAGE', `cannot read the saved objects ${from}: ${(err as Error).message}`);
  }
  if (o.dryRun) {
    await writeOut(ndjson);
    process.stderr.write(`(dry run: ${ndjson.trim().split('\n').length} saved objects ${from}; nothing was sent)\n`);
    return 0;
  }
  const url = o.url ?? ctx.config.kibana.url;
  if (!url) throw new SandtrailError('USAGE', 'kibana import needs --url KIBANA_URL (or KIBANA_URL)');
  const result = await importKibanaNdjson(url, kibanaAuth(ctx.config), ndjson, { space: o.space ?? ctx.config.kibana.space });
  if (o.json) await writeOut(`${JSON.stringify(result)}\n`);
  else {
    await writeOut(`imported ${result.successCount} saved objects from ${from} into ${url.replace(/\/+$/, '')}\n`);
    for (const e of result.errors) await writeOut(`error: ${JSON.stringify(e)}\n`);
  }
  return result.success ? 0 : 1;
}
