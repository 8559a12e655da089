import type { Command } from 'commander';
import { ARTEFACT_OPTIONS } from './artefactFlags.js';
import { artefactsListCommand } from './commands/query.js';
import { collect, type ProgramKit } from './context.js';

// command modules load when their command runs (a query does not load the workers' packages)
const loadLookup = () => import('./commands/lookup.js');
const loadFetch = () => import('./commands/fetch.js');
const loadPrivate = () => import('./commands/private.js');
/** The worker process runner (what runs in each worker is its row of PROCESS_KINDS). */
const loadWorkerProcess = () => import('../runner/index.js');

/** Adds the artefact flags to a command. */
export function withArtefactOptions(cmd: Command): Command {
  for (const [flags, what] of ARTEFACT_OPTIONS) cmd.option(flags, what);
  return cmd;
}

/** Adds the budget flags of every command that spends API units. */
function withBudgetOptions(cmd: Command): Command {
  return cmd
    .option('--dry-run', 'print the API-unit estimate by quota rule and call nothing')
    .option('--max-api-units <n>', 'stop before the run would spend more than n API units (shared by every worker of the run)')
    .option('--force', 'start even when the estimate exceeds the remaining daily allowance');
}

/**
 * The GTI API beyond the feed: per-file lookups, single behaviours, private file reports,
 * artefacts, and the worker processes that run lookups and downloads for a fleet.
 */
/** What the commands that call the API read besides their flags. */
export const KEY_HELP = '\nEnvironment: GTI_APIKEY (the key its calls use); the rest as in sandtrail --help.';

export function registerContractCommands(program: Command, kit: ProgramKit, worker: Command): void {
  const { ctxOf, action, asLogged, processCtxOf } = kit;
  withArtefactOptions(
    withBudgetOptions(
      program
        .command('lookup')
        .description(
          'fetch every behaviour report of files by hash (GET /files/{hash}/behaviours, paged, 1 API unit per page) and index them like feed records',
        )
        .argument('[hash...]', 'MD5, SHA-1 or SHA-256, any case (anything else is a usage error: exit 2, nothing is asked)')
        .option(
          '--file <list>',
          'read hashes from a file, one per line (# comments; - for stdin; a line that is not a hash is reported invalid and costs nothing); repeatable',
          collect,
        )
        .option('--refresh', 'fetch again hashes an earlier run finished (default: skip them)')
        .option('--no-workers', 'only enqueue and wait: let `worker lookup` processes on the same Redis do the work')
        .option('--json', 'summary as one JSON object: per-hash outcomes, documents, API units')
        .addHelpText('after', KEY_HELP),
    ),
  ).action(
    action(async (hashes: string[], o, cmd: Command) => (await loadLookup()).lookupCommand(hashes, o, ctxOf(cmd, { logLevel: 'warn' }))),
  );

  withArtefactOptions(
    withBudgetOptions(
      program
        .command('fetch')
        .description('fetch one behaviour report (GET /file_behaviours/{id}, 1 API unit) and index it')
        .argument('<id>', 'behaviour id <sha256>_<sandbox name> (quote it: sandbox names contain spaces)')
        .option('--relationships', 'also fetch its file and attack_techniques relationships (1 unit per page) and store them with it')
        .option('--json', 'result as one JSON object')
        .addHelpText('after', KEY_HELP),
    ),
  ).action(action(async (id: string, o, cmd: Command) => (await loadFetch()).fetchCommand(id, o, ctxOf(cmd, { logLevel: 'warn' }))));

  const priv = program.command('private').description('private file reports (Private Scanning licence), stored apart from public data');
  withBudgetOptions(
    priv
      .command('lookup')
      .description('fetch private file reports (GET /private/files/{sha256} with x-tool, 1 API unit each) into the store')
      .argument('[sha256...]', 'SHA-256 only: MD5, SHA-1 and anything else are refused before any request and cost nothing')
      .option('--file <list>', 'read hashes from a file, one per line; repeatable', collect)
      .option('--json', 'summary as one JSON object')
      .addHelpText('after', KEY_HELP),
  ).action(
    action(async (hashes: string[], o, cmd: Command) =>
      (await loadPrivate()).privateLookupCommand(hashes, o, ctxOf(cmd, { logLevel: 'warn' })),
    ),
  );

  const artefacts = program.command('artefacts').description('artefacts (pcap, evtx, memdump, html) downloaded into artefacts.dir');
  artefacts
    .command('list')
    .description('artefacts recorded for one behaviour report: kind, size, SHA-256, source, path')
    .argument('<id>', 'behaviour id')
    .option('--json', 'JSON array')
    .action(action((id: string, o: { json?: boolean }, cmd: Command) => artefactsListCommand(id, o, ctxOf(cmd, { logLevel: 'warn' }))));

  worker
    .command('lookup')
    .description('run the lookup worker (hash jobs of `sandtrail lookup --no-workers`) and the artefact downloads they queue')
    .addHelpText('after', '\nEnvironment: GTI_APIKEY (the key its calls use), REDIS_URL (required); the rest as in sandtrail --help.')
    .action(
      action(async (_o, cmd: Command) => {
        const ctx = processCtxOf(cmd, 'lookup');
        const log = ctx.log.child({ worker: 'lookup' });
        return asLogged(log, async () => {
          const { runWorkerProcess } = await loadWorkerProcess();
          return (await runWorkerProcess('worker lookup', ctx.config, log)) ? 130 : 0;
        });
      }),
    );
  worker
    .command('artefacts')
    .description('run the artefact download worker (jobs queued by feed and lookup workers for --artefacts)')
    .addHelpText('after', '\nEnvironment: GTI_APIKEY (the key its calls use), REDIS_URL (required); the rest as in sandtrail --help.')
    .action(
      action(async (_o, cmd: Command) => {
        const ctx = processCtxOf(cmd, 'artefacts');
        const log = ctx.log.child({ worker: 'artefacts' });
        return asLogged(log, async () => {
          const { runWorkerProcess } = await loadWorkerProcess();
          return (await runWorkerProcess('worker artefacts', ctx.config, log)) ? 130 : 0;
        });
      }),
    );
}
