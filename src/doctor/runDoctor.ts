import { resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { errorCode, messageOf } from '../errors/index.js';
import { isElasticsearchSpec, shownStoreSpec } from '../store/index.js';
import { checkArtefactsDir } from './checkArtefactsDir.js';
import { checkDecoder } from './checkDecoder.js';
import { checkElasticsearch } from './checkElasticsearch.js';
import { checkGti } from './checkGti.js';
import { checkNode } from './checkNode.js';
import { checkRedis } from './checkRedis.js';
import { checkSqlite } from './checkSqlite.js';
import { checkOf, type CheckResult, type DoctorReport } from './CheckResult.js';
import { withTimeout } from './withTimeout.js';

/** What doctor needs from the edge (the command): no module below reads process.env or process.versions. */
export interface DoctorOptions {
  /** `process.versions.node`. */
  nodeVersion: string;
  /** package.json `engines.node` (`>=20.10`). */
  engines?: string;
  /** PATH to search for bzip2 decoders and redis-server. */
  pathEnv: string;
  /** Directories searched after PATH (default: the feed's own list; [] searches PATH only). */
  extraDirs?: readonly string[];
  /** Relative store and artefact paths resolve against it. */
  cwd: string;
  /** Commands install redis-server themselves when run as root. */
  isRoot: boolean;
  /** Bound of each check (default 5 s): doctor never hangs on an unreachable host. */
  timeoutMs?: number;
  /** `SANDTRAIL_*` variables set that sandtrail does not read (a misspelt setting), with the name each is closest to. */
  unknownEnv?: readonly { name: string; closest?: string | undefined }[];
}

const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * One group of checks under the deadline: past it, or if it throws, a single failing result with
 * the group's id stands for it.
 */
function bounded(ms: number, id: string, title: string, fix: string, run: (signal: AbortSignal) => Promise<CheckResult[]>) {
  const c = checkOf(id, title);
  return withTimeout(
    ms,
    async (signal) => {
      try {
        return await run(signal);
      } catch (err) {
        return [c.fail(`could not be checked: ${messageOf(err)}`, fix)];
      }
    },
    () => [c.fail(`no answer within ${ms / 1000} s`, fix)],
  );
}

/** Passwords and keys of the configuration, so no result can ever print one. */
function secretsOf(config: Config): string[] {
  const fromUrl = (u: string | undefined): string[] => {
    try {
      const p = u ? new URL(u.replace(/^(es|elasticsearch):/, '')).password : '';
      return p ? [p, decodeURIComponent(p)] : [];
    } catch {
      return [];
    }
  };
  const { gti, elasticsearch: es, kibana } = config;
  return [gti.apiKey, es.apiKey, es.password, kibana.apiKey, kibana.password, ...fromUrl(config.redisUrl), ...fromUrl(config.store)]
    .filter((s): s is string => typeof s === 'string' && s.length >= 3)
    .sort((a, b) => b.length - a.length);
}

function redact(r: CheckResult, secrets: string[]): CheckResult {
  const scrub = (s: string): string => secrets.reduce((t, secret) => t.split(secret).join('***'), s);
  return { ...r, detail: scrub(r.detail), ...(r.fix === undefined ? {} : { fix: scrub(r.fix) }) };
}

function report(checks: CheckResult[]): DoctorReport {
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}

/**
 * `sandtrail doctor`: checks the installation and explains what to fix. `config` is loaded
 * inside so an invalid configuration is reported as a check (with the Node check) rather than
 * ending the run. Groups run concurrently, each bounded by `timeoutMs`; nothing is started,
 * created or written except the 0-unit quota read on the ledger.
 */
export async function runDoctor(config: () => Config, o: DoctorOptions): Promise<DoctorReport> {
  const ms = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const node = checkNode(o.nodeVersion, o.engines);
  const configCheck = checkOf('config', 'Configuration');
  let cfg: Config;
  try {
    cfg = config();
  } catch (err) {
    const fix =
      errorCode(err) === 'CONFIG_INVALID' || errorCode(err) === 'USAGE'
        ? 'correct the setting named above (flags, SANDTRAIL_* variables or the --config file)'
        : 'fix the cause above';
    return report([configCheck.fail(messageOf(err), fix), node]);
  }
  const lookup = { pathEnv: o.pathEnv, ...(o.extraDirs ? { extraDirs: o.extraDirs } : {}) };
  const store = cfg.store;
  const groups = await Promise.all([
    bounded(ms, 'redis', 'Redis', 'check that the Redis host is reachable, or correct REDIS_URL', (signal) =>
      checkRedis(cfg.redisUrl, {
        lookup,
        timeoutMs: ms,
        signal,
        isRoot: o.isRoot,
        prefix: cfg.queuePrefix,
        redisCluster: cfg.redisCluster,
      }),
    ),
    isElasticsearchSpec(store)
      ? bounded(
          ms,
          'store',
          'Store (Elasticsearch)',
          'check that the cluster is reachable, or correct --store / ELASTICSEARCH_URL',
          (signal) => checkElasticsearch(store, cfg, { timeoutMs: ms, signal }),
        )
      : store.startsWith('sqlite:')
        ? bounded(ms, 'store', 'Store (SQLite)', 'check the filesystem of the database', () =>
            // quick_check ends before the group's bound, so an unfinished check is told as such
            checkSqlite(resolve(o.cwd, store.slice('sqlite:'.length)), Math.max(ms - 1000, 500)),
          )
        : [checkOf('store', 'Store').fail(`unknown store "${store}"`, 'use --store sqlite:FILE or es:URL (SANDTRAIL_STORE)')],
    bounded(ms, 'gti', 'GTI API key', 'check GTI_BASE_URL and the network', async (signal) => [
      await checkGti(cfg.gti, {
        redisUrl: cfg.redisUrl,
        redisCluster: cfg.redisCluster,
        queuePrefix: cfg.queuePrefix,
        timeoutMs: ms,
        signal,
      }),
    ]),
    bounded(ms, 'decoder', 'bzip2 decoder', 'apt-get install lbzip2', async () => [
      checkDecoder(cfg.feed.decoder, cfg.feed.decoderThreads, lookup),
    ]),
    bounded(ms, 'artefacts', 'Artefacts directory', 'check the filesystem of artefacts.dir', async () => [
      await checkArtefactsDir(resolve(o.cwd, cfg.artefacts.dir)),
    ]),
  ]);
  const secrets = secretsOf(cfg);
  // a misspelt variable leaves its setting at another value: valid, but not what was meant
  const unknown = (o.unknownEnv ?? []).map((u) => `${u.name}${u.closest ? ` (did you mean ${u.closest}?)` : ''}`);
  const configResult = unknown.length
    ? configCheck.warn(
        `valid; store ${shownStoreSpec(store)}; ignored, since sandtrail reads no such variable: ${unknown.join(', ')}`,
        'rename or unset those variables (docs/settings.md lists every one)',
      )
    : configCheck.pass(`valid; store ${shownStoreSpec(store)}`);
  return report([configResult, node, ...groups.flat()].map((r) => redact(r, secrets)));
}
