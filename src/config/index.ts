export { loadConfig, configFromEnv, envSettings, ENV_ALIASES, ENV_MAP_PREFIXES } from './loadConfig.js';
export type { LoadConfigOptions, EnvSetting, EnvAlias } from './loadConfig.js';
export { configSchema, WEBHOOK_NAME } from './schema.js';
export type { Config, ConfigInput } from './schema.js';
export { unknownEnvNames, unknownEnvWarnings } from './unknownEnvNames.js';
