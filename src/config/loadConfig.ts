import { readFileSync } from 'node:fs';
import { SandtrailError } from '../errors/index.js';
import { configSchema, type Config, type ConfigInput } from './schema.js';

type Dict = Record<string, unknown>;

const BOOLEAN: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false, yes: true, no: false };

/** One environment variable per setting: `SANDTRAIL_` + the dotted path in SCREAMING_SNAKE. */
export interface EnvSetting {
  env: string;
  path: string[];
  /** `map`: one variable per entry, `env` ending in `<NAME>` (the entry's name upper-cased). */
  kind: 'string' | 'number' | 'boolean' | 'map';
  /** What the setting means (the schema's description). */
  description: string;
}

const snake = (s: string): string => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Settings that are maps of names, and the prefix of their variables: SANDTRAIL_WEBHOOK_SOC=URL is webhooks.soc. */
export const ENV_MAP_PREFIXES: Readonly<Record<string, string>> = { webhooks: 'SANDTRAIL_WEBHOOK_' };

/** Every setting with its environment variable, derived from the schema so docs never drift. */
export function envSettings(): EnvSetting[] {
  const out: EnvSetting[] = [];
  const walk = (shape: Dict, path: string[]): void => {
    for (const [key, value] of Object.entries(shape)) {
      const inner = unwrap(value);
      const p = [...path, key];
      const typeName = (inner as { _def?: { typeName?: string } })._def?.typeName;
      const description = (value as { description?: string }).description ?? (inner as { description?: string }).description ?? '';
      const mapPrefix = ENV_MAP_PREFIXES[p.join('.')];
      if (inner && typeof inner === 'object' && 'shape' in inner) {
        walk((inner as { shape: Dict }).shape, p);
      } else if (typeName === 'ZodRecord' && mapPrefix) {
        out.push({ env: `${mapPrefix}<NAME>`, path: p, kind: 'map', description });
      } else {
        out.push({
          env: `SANDTRAIL_${p.map(snake).join('_')}`,
          path: p,
          kind: typeName === 'ZodNumber' ? 'number' : typeName === 'ZodBoolean' ? 'boolean' : 'string',
          description,
        });
      }
    }
  };
  walk(configSchema.shape as unknown as Dict, []);
  return out;
}

function unwrap(t: unknown): unknown {
  let cur = t as { _def?: { innerType?: unknown; schema?: unknown } };
  while (cur?._def?.innerType || cur?._def?.schema) cur = (cur._def.innerType ?? cur._def.schema) as typeof cur;
  return cur;
}

function setPath(target: Dict, path: string[], value: unknown): void {
  let cur = target;
  for (const key of path.slice(0, -1)) {
    if (typeof cur[key] !== 'object' || cur[key] === null) cur[key] = {};
    cur = cur[key] as Dict;
  }
  cur[path[path.length - 1] as string] = value;
}

function deepMerge(base: Dict, over: Dict): Dict {
  const out: Dict = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Dict, v as Dict)
        : v;
  }
  return out;
}

/** `sink` is the former name of `store`: accepted in every source, `store` wins when both are set. */
function renameLegacy(d: Dict): Dict {
  if (!('sink' in d)) return d;
  const { sink, ...rest } = d;
  return rest.store === undefined && sink !== undefined ? { ...rest, store: sink } : rest;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

/** A conventional variable read besides the SANDTRAIL_* ones: the setting it fills, and a prefix its value gets. */
export interface EnvAlias {
  env: string;
  path: string[];
  /** Prepended to the value (ELASTICSEARCH_URL=U means store es:U). */
  prefix?: string;
}

/**
 * The other names a setting is read from, in the order they apply (a later one wins; the
 * SANDTRAIL_* variable of the setting wins over all of them): the conventional REDIS_URL, the
 * names the official GTI clients and Elastic's own tools use, and `store`'s former name.
 */
export const ENV_ALIASES: readonly EnvAlias[] = [
  { env: 'REDIS_URL', path: ['redisUrl'] },
  { env: 'GTI_APIKEY', path: ['gti', 'apiKey'] },
  { env: 'GTI_BASE_URL', path: ['gti', 'baseUrl'] },
  { env: 'GTI_XTOOL', path: ['gti', 'xTool'] },
  { env: 'ELASTICSEARCH_URL', path: ['store'], prefix: 'es:' },
  { env: 'SANDTRAIL_SINK', path: ['store'] },
  { env: 'ELASTICSEARCH_API_KEY', path: ['elasticsearch', 'apiKey'] },
  { env: 'ELASTICSEARCH_USERNAME', path: ['elasticsearch', 'username'] },
  { env: 'ELASTICSEARCH_PASSWORD', path: ['elasticsearch', 'password'] },
  { env: 'ELASTICSEARCH_CA_FILE', path: ['elasticsearch', 'caFile'] },
  { env: 'ELASTICSEARCH_CA_FINGERPRINT', path: ['elasticsearch', 'caFingerprint'] },
  { env: 'KIBANA_URL', path: ['kibana', 'url'] },
];

/** A number as people write one in a variable: decimal digits, a sign and a fraction at most (not 0x10, 1e3, or blank). */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/**
 * Reads `SANDTRAIL_*` variables (plus the conventional names of ENV_ALIASES) into a partial config.
 * A variable that cannot be read is left out and named in `problems` (every one of them, not the
 * first); without `problems` the first one throws CONFIG_INVALID.
 */
export function configFromEnv(env: NodeJS.ProcessEnv, problems?: string[]): ConfigInput {
  const out: Dict = {};
  const bad = (message: string): void => {
    if (!problems) throw new SandtrailError('CONFIG_INVALID', message);
    problems.push(message);
  };
  for (const a of ENV_ALIASES) {
    const raw = env[a.env];
    if (raw) setPath(out, a.path, `${a.prefix ?? ''}${raw}`);
  }
  for (const s of envSettings()) {
    if (s.kind === 'map') {
      const prefix = s.env.slice(0, -'<NAME>'.length);
      for (const [name, raw] of Object.entries(env)) {
        // the name as a config file writes it: lower-case, - where the variable has _ is not told apart
        if (name.startsWith(prefix) && name.length > prefix.length && raw)
          setPath(out, [...s.path, name.slice(prefix.length).toLowerCase()], raw);
      }
      continue;
    }
    const raw = env[s.env];
    if (raw === undefined || raw === '') continue;
    const value = s.kind === 'number' ? Number(raw) : s.kind === 'boolean' ? BOOLEAN[raw.trim().toLowerCase()] : raw;
    if (s.kind === 'number' && (!DECIMAL.test(raw.trim()) || !Number.isFinite(value))) {
      bad(`${s.env} must be a decimal number, got "${raw}"`);
      continue;
    }
    if (s.kind === 'boolean' && value === undefined) {
      bad(`${s.env} must be true or false, got "${raw}"`);
      continue;
    }
    setPath(out, s.path, value);
  }
  return out as ConfigInput;
}

export interface LoadConfigOptions {
  /** Settings from command-line flags (highest precedence). */
  flags?: ConfigInput;
  /** Environment (defaults to none: callers pass process.env explicitly at the edge). */
  env?: NodeJS.ProcessEnv;
  /** Path of a JSON config file. */
  file?: string;
  /** A command's own defaults, under the file (a read command logs warnings only unless told otherwise). */
  defaults?: ConfigInput;
}

/**
 * Validates configuration once at start-up: flags > env > file > defaults, unknown keys
 * rejected, result deep-frozen. Throws CONFIG_INVALID naming every bad setting.
 */
export function loadConfig(opts: LoadConfigOptions = {}): Config {
  let fromFile: Dict = {};
  if (opts.file) {
    let parsed: unknown;
    try {
      // a leading byte order mark (editors on Windows write one) is not part of the JSON
      parsed = JSON.parse(readFileSync(opts.file, 'utf8').replace(/^\uFEFF/, ''));
    } catch (err) {
      throw new SandtrailError('CONFIG_INVALID', `cannot read config file ${opts.file}: ${(err as Error).message}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      const what = Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : `a ${typeof parsed}`;
      throw new SandtrailError('CONFIG_INVALID', `config file ${opts.file} holds ${what}: it must be one JSON object of settings`);
    }
    fromFile = parsed as Dict;
  }
  const envProblems: string[] = [];
  const merged = deepMerge(
    deepMerge(
      deepMerge(renameLegacy((opts.defaults ?? {}) as Dict), renameLegacy(fromFile)),
      renameLegacy(configFromEnv(opts.env ?? {}, envProblems) as Dict),
    ),
    renameLegacy((opts.flags ?? {}) as Dict),
  );
  const parsed = configSchema.safeParse(merged);
  // every bad setting at once: the variables that could not be read, then what the schema refuses
  const problems = [
    ...envProblems,
    ...(parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)),
  ];
  if (problems.length === 1 && envProblems.length === 1) throw new SandtrailError('CONFIG_INVALID', problems[0] as string);
  if (problems.length > 0 || !parsed.success) throw new SandtrailError('CONFIG_INVALID', `invalid configuration: ${problems.join('; ')}`);
  return deepFreeze(clusterMode(parsed.data)) as Config;
}

/**
 * A list of Redis URLs means a cluster. On a cluster every key of one script or transaction must
 * hash to one slot: BullMQ's and sandtrail's keys all start with the queue prefix, so braces
 * around it (a hash tag) put them all in the slot of its name.
 */
function clusterMode(c: Config): Config {
  const listed = (c.redisUrl ?? '').includes(',');
  if (!c.redisCluster && !listed) return c;
  if (!c.redisUrl) {
    throw new SandtrailError(
      'CONFIG_INVALID',
      'invalid configuration: redisCluster: a Redis Cluster needs redisUrl (REDIS_URL) naming some of its nodes',
    );
  }
  const queuePrefix = c.queuePrefix.startsWith('{') ? c.queuePrefix : `{${c.queuePrefix}}`;
  return { ...c, redisCluster: true, queuePrefix };
}
