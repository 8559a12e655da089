export { loadConfig, configFromEnv, envSettings } from './loadConfig.js';
export type { LoadConfigOptions, EnvSetting } from './loadConfig.js';
export { configSchema } from './schema.js';
export type { Config, ConfigInput } from './schema.js';
