import { readFileSync } from 'node:fs';
import { SandtrailError } from '../errors/index.js';
import { configSchema, type Config, type ConfigInput } from './schema.js';

type Dict = Record<string, unknown>;

const BOOLEAN: Readonly<Record<string, boolean>> = { true: true, false: false, '1': true, '0': false, yes: true, no: false };

/** One environment variable per setting: `SANDTRAIL_` + the dotted path in SCREAMING_SNAKE. */
export interface EnvSetting {
  env: string;
  path: string[];
  kind: 'string' | 'number' | 'boolean';
  /** What the setting means (the schema's description). */
  description: string;
}

const snake = (s: string): string => s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/** Every setting with its environment variable, derived from the schema so docs never drift. */
export function envSettings(): EnvSetting[] {
  const out: EnvSetting[] = [];
  const walk = (shape: Dict, path: string[]): void => {
    for (const [key, value] of Object.entries(shape)) {
      const inner = unwrap(value);
      const p = [...path, key];
      if (inner && typeof inner === 'object' && 'shape' in inner) {
        walk((inner as { shape: Dict }).shape, p);
      } else {
        const typeName = (inner as { _def?: { typeName?: string } })._def?.typeName;
        const description = (value as { description?: string }).description ?? (inner as { description?: string }).description ?? '';
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

const ES_ENV: readonly [string, string][] = [
  ['ELASTICSEARCH_API_KEY', 'apiKey'],
  ['ELASTICSEARCH_USERNAME', 'username'],
  ['ELASTICSEARCH_PASSWORD', 'password'],
  ['ELASTICSEARCH_CA_FILE', 'caFile'],
  ['ELASTICSEARCH_CA_FINGERPRINT', 'caFingerprint'],
];

/** Reads `SANDTRAIL_*` variables (plus the conventional `REDIS_URL`) into a partial config. */
export function configFromEnv(env: NodeJS.ProcessEnv): ConfigInput {
  const out: Dict = {};
  if (env.REDIS_URL) out.redisUrl = env.REDIS_URL;
  // the names the official GTI clients use
  if (env.GTI_APIKEY) setPath(out, ['gti', 'apiKey'], env.GTI_APIKEY);
  if (env.GTI_BASE_URL) setPath(out, ['gti', 'baseUrl'], env.GTI_BASE_URL);
  if (env.GTI_XTOOL) setPath(out, ['gti', 'xTool'], env.GTI_XTOOL);
  // the names Elastic's own tools use
  if (env.ELASTICSEARCH_URL) out.store = `es:${env.ELASTICSEARCH_URL}`;
  // the setting's former name, still accepted
  if (env.SANDTRAIL_SINK) out.store = env.SANDTRAIL_SINK;
  for (const [name, key] of ES_ENV) if (env[name]) setPath(out, ['elasticsearch', key], env[name]);
  if (env.KIBANA_URL) setPath(out, ['kibana', 'url'], env.KIBANA_URL);
  for (const s of envSettings()) {
    const raw = env[s.env];
    if (raw === undefined || raw === '') continue;
    const value = s.kind === 'number' ? Number(raw) : s.kind === 'boolean' ? BOOLEAN[raw.toLowerCase()] : raw;
    if (s.kind === 'number' && !Number.isFinite(value)) {
      throw new SandtrailError('CONFIG_INVALID', `${s.env} must be a number, got "${raw}"`);
    }
    if (s.kind === 'boolean' && value === undefined) {
      throw new SandtrailError('CONFIG_INVALID', `${s.env} must be true or false, got "${raw}"`);
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
}

/**
 * Validates configuration once at start-up: flags > env > file > defaults, unknown keys
 * rejected, result deep-frozen. Throws CONFIG_INVALID naming every bad setting.
 */
export function loadConfig(opts: LoadConfigOptions = {}): Config {
  let fromFile: Dict = {};
  if (opts.file) {
    try {
      fromFile = JSON.parse(readFileSync(opts.file, 'utf8')) as Dict;
    } catch (err) {
      throw new SandtrailError('CONFIG_INVALID', `cannot read config file ${opts.file}: ${(err as Error).message}`);
    }
  }
  const merged = deepMerge(
    deepMerge(renameLegacy(fromFile), renameLegacy(configFromEnv(opts.env ?? {}) as Dict)),
    renameLegacy((opts.flags ?? {}) as Dict),
  );
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new SandtrailError('CONFIG_INVALID', `invalid configuration: ${problems}`);
  }
  return deepFreeze(parsed.data) as Config;
}
