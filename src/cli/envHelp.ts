import { envSettings } from '../config/index.js';

/** Variables read at the edge besides the SANDTRAIL_* settings: name, meaning. */
const EDGE_ENV: [string, string][] = [
  [
    'REDIS_URL, SANDTRAIL_REDIS_URL',
    'Redis for queues and the quota ledger (none: a private redis-server is started for the command); rediss:// for TLS (a private CA through NODE_EXTRA_CA_CERTS); several comma-separated URLs for a Redis Cluster.',
  ],
  ['SANDTRAIL_CONFIG', 'JSON config file (same as --config).'],
  ['GTI_APIKEY', 'GTI API key (never logged; same as SANDTRAIL_GTI_API_KEY).'],
  ['GTI_BASE_URL, GTI_XTOOL', 'GTI API base URL and x-tool header value.'],
  ['ELASTICSEARCH_URL', 'Elasticsearch node URL: store es:URL (SANDTRAIL_STORE and --store win).'],
  ['ELASTICSEARCH_API_KEY', 'Elasticsearch API key, base64 id:key (never logged).'],
  ['ELASTICSEARCH_USERNAME, ELASTICSEARCH_PASSWORD', 'Basic auth instead of an API key.'],
  ['ELASTICSEARCH_CA_FILE, ELASTICSEARCH_CA_FINGERPRINT', "CA of a self-managed cluster's TLS certificate."],
  ['KIBANA_URL', 'Kibana URL for kibana import (same as SANDTRAIL_KIBANA_URL).'],
  ['SANDTRAIL_SINK', 'Former name of SANDTRAIL_STORE, still read.'],
  [
    'SANDTRAIL_SOURCE, SANDTRAIL_START',
    'The scheduler entry point node dist/workers/scheduler.js only: its source (default api) and where to begin without a saved cursor (worker scheduler takes --source and --start).',
  ],
  ['SANDTRAIL_DEMO_DB', 'The store npm run demo writes (default .data/demo.db).'],
];

/** The environment and exit-code part of `--help`: every variable read, each setting's description from the schema. */
export const ENV_HELP = `
Environment (flags win over environment, environment over the config file):
${EDGE_ENV.map(([name, what]) => `  ${name}\n${wrap(what, 6, 78)}`).join('\n')}
${envSettings()
  .filter((s) => s.env !== 'SANDTRAIL_REDIS_URL')
  .map((s) => `  ${s.env}\n${wrap(`${s.path.join('.')}: ${s.description}`, 6, 78)}`)
  .join('\n')}

Exit codes: 0 ok, 1 failure (backfill: a batch failed; the summary is still
printed; any command: what it names cannot be used: no store at the --store path
(reads never create one), not a SQLite database, a feed directory without batch
files, Redis unreachable), 2 usage error (an unknown option, command or --store
spec, an invalid setting, a missing required one such as a worker's REDIS_URL),
3 some input lines rejected (normalize, quota replay), 130 stopped by a signal
before the work was done.`;

/** Wraps text to `width` columns, each line indented by `indent` spaces. */
function wrap(text: string, indent: number, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines.map((l) => `${' '.repeat(indent)}${l}`).join('\n');
}
