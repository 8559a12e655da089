export { loadConfig, configFromEnv, envSettings, ENV_ALIASES } from './loadConfig.js';
export type { LoadConfigOptions, EnvSetting, EnvAlias } from './loadConfig.js';
export { configSchema } from './schema.js';
export type { Config, ConfigInput } from './schema.js';
export { unknownEnvNames } from './unknownEnvNames.js';
