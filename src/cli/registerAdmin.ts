import type { Command } from 'commander';
import type { ProgramKit } from './context.js';
import { QUOTA_REPLAY_HELP } from './quotaReplayHelp.js';

// command modules load when their command runs (a query does not load the workers' packages)
const loadDlq = () => import('./commands/dlq.js');
const loadDoctor = () => import('./commands/doctor.js');
const loadElastic = () => import('./commands/elastic.js');
const loadQuota = () => import('./commands/quota.js');
const loadPrune = () => import('./commands/prune.js');

/** The store's and the account's housekeeping: dead letters, quota and ledger, Elasticsearch and Kibana setup. */
export function registerAdminCommands(program: Command, kit: ProgramKit): void {
  const { ctxOf, action } = kit;
  const dlq = program.command('dlq').description('manage the dead-letter store');
  dlq
    .command('list')
    .description('list dead letters (id, code, path, message)')
    .option('--json', 'one JSON object: {total, offset, limit, truncated, entries}')
    .option('--limit <n>', 'at most n entries', '1000')
    .option('--offset <n>', 'skip the first n entries (paging)', '0')
    .option('--stage <stage>', 'normalize, index or watch (undelivered watch notifications)')
    .option('--batch <minute>', 'one batch only')
    .action(action(async (o, cmd: Command) => (await loadDlq()).dlqList(o, ctxOf(cmd, { logLevel: 'warn' }))));
  dlq
    .command('show')
    .description('show one dead letter with its raw text')
    .argument('<id>')
    .option('--json', 'compact JSON')
    .action(
      action(async (id: string, o: { json?: boolean }, cmd: Command) => (await loadDlq()).dlqShow(id, o, ctxOf(cmd, { logLevel: 'warn' }))),
    );
  dlq
    .command('replay')
    .description('re-run dead letters through the normalizer and store; those that pass are indexed and removed')
    .argument('[id...]')
    .option('--all', 'replay every entry')
    .option('--json', 'JSON result')
    .action(
      action(async (ids: string[], o: { all?: boolean; json?: boolean }, cmd: Command) =>
        (await loadDlq()).dlqReplay(ids, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );
  dlq
    .command('purge')
    .description('delete every dead letter: prints how many, and deletes them only with --yes (or once confirmed on a terminal)')
    .option('--yes', 'delete without asking (without it and without a terminal: exit 2 with the count)')
    .option('--json', 'JSON result')
    .action(
      action(async (o: { json?: boolean; yes?: boolean }, cmd: Command) => (await loadDlq()).dlqPurge(o, ctxOf(cmd, { logLevel: 'warn' }))),
    );

  program
    .command('prune')
    .description(
      'remove behaviours last modified more than DAYS ago (and bookkeeping written before its own cutoff), in short steps a running pipeline shares the store with',
    )
    .option('--older-than <days>', 'behaviours whose last_modification_date is older than this many days (default: retention.days)')
    .option(
      '--bookkeeping-older-than <days>',
      'dead letters, batch-log rows, watch hits and artefact records written more than this many days ago, or off (default: retention.bookkeepingDays, else --older-than)',
    )
    .option('--dry-run', 'count what would go, remove nothing')
    .option(
      '--json',
      'one JSON object: {dryRun, behavioursBefore, bookkeepingBefore, behaviours, partitions, deadLetters, batches, watchHits, artefacts, sharedObjects, done}',
    )
    .action(
      action(async (o: { olderThan?: string; bookkeepingOlderThan?: string; dryRun?: boolean; json?: boolean }, cmd: Command) =>
        (await loadPrune()).pruneCommand(o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  const quota = program.command('quota').description('GTI quota policy and allowances');
  quota
    .command('replay')
    .description('apply the quota policy (spec rules 1-15) to a file of JSON-lines operations and print the consumption')
    .argument('<file>', 'operations, one JSON object per line (the format is below)')
    .option('--json', 'print {"users":{...},"groups":{...}}')
    .addHelpText('after', QUOTA_REPLAY_HELP)
    .action(action(async (file: string, o: { json?: boolean }) => (await loadQuota()).quotaReplayCommand(file, o)));
  quota
    .command('check')
    .description("read the service's allowed/used quotas (/users/{id}/overall_quotas, 0 units by rule 2) beside the ledger's figures")
    .option('--user <id>', 'GTI user id (env SANDTRAIL_GTI_USER)')
    .option('--json', 'JSON output')
    .action(
      action(async (o: { user?: string; json?: boolean }, cmd: Command) =>
        (await loadQuota()).quotaCheckCommand(o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  program
    .command('ledger')
    .description('units and call counts per quota kind and per operation recorded for upstream calls (needs REDIS_URL)')
    .option('--user <id>', 'one user')
    .option('--group <id>', 'one group')
    .option('--period <period>', 'minute, day or month (UTC)', 'day')
    .option('--at <iso>', 'a time inside the bucket to show (default now)')
    .option('--json', 'JSON array of usage rows')
    .action(
      action(async (o: { user?: string; group?: string; period?: string; at?: string; json?: boolean }, cmd: Command) =>
        (await loadQuota()).ledgerCommand(o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  const es = program.command('es').description('Elasticsearch index management');
  es.command('setup')
    .description(
      'create or update the lifecycle policy, the component and index templates, the read alias over the daily behaviour indices and the bookkeeping indices (idempotent)',
    )
    .option('--dry-run', 'print the requests (Dev Tools console syntax) instead of sending them; needs no cluster')
    .option('--json', 'JSON output (with --dry-run: the request plan as a JSON array)')
    .action(
      action(async (o: { dryRun?: boolean; json?: boolean }, cmd: Command) =>
        (await loadElastic()).esSetupCommand(o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  const kibana = program.command('kibana').description('Kibana saved objects for hunters');
  kibana
    .command('import')
    .description('import the data views (pivot fields link to pivot searches), saved searches and hunting dashboard')
    .option('--url <url>', 'Kibana base URL (env KIBANA_URL)')
    .option(
      '--file <ndjson>',
      'saved objects file (default: the shipped kibana/sandtrail.ndjson, or generated for a non-default index prefix)',
    )
    .option('--space <id>', 'Kibana space (env SANDTRAIL_KIBANA_SPACE; default space when absent)')
    .option('--dry-run', 'print the NDJSON that would be imported and send nothing')
    .option('--json', 'print the import result as JSON')
    .action(
      action(async (o: { url?: string; file?: string; space?: string; dryRun?: boolean; json?: boolean }, cmd: Command) =>
        (await loadElastic()).kibanaImportCommand(o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  program
    .command('doctor')
    .description('check the installation (Node, Redis, clock, store, GTI key, bzip2 decoder, disk space) and explain what to fix')
    .option('--json', 'print {"ok": boolean, "checks": [{id, title, status, detail, fix?}]}')
    .action(
      action(async (o: { json?: boolean }, cmd: Command) =>
        (await loadDoctor()).doctorCommand(o, () => ctxOf(cmd, { logLevel: 'warn' }).config, process.env),
      ),
    );
}
