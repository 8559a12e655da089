import { Option, type Command } from 'commander';
import { WATCH_FLAGS, watchAddCommand, watchHitsCommand, watchListCommand, watchRemoveCommand } from './commands/watch.js';
import type { ProgramKit } from './context.js';

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

const ADD_HELP = `
Any one condition matching is a hit; each (watch, behaviour, version) is a hit once,
however often its documents are written again. Running workers see a new watch
within a few seconds. Hits are appended to --file as JSON lines and POSTed to
--webhook as JSON (retried; an undelivered one becomes a dead letter of stage
"watch", code WEBHOOK_FAILED). Only the webhook's host is ever shown or logged.

Example:
  sandtrail watch add apt-loader --behash 0e3e4f... --ja3 a0e9f5d64349fb13191bc781f81f42e1 \\
    --file ./alerts/apt-loader.jsonl --webhook https://hooks.example/T0/B0/XX --retro`;

/** Hunting: watchlists that alert when matching behaviours are stored. */
export function registerHunting(program: Command, kit: ProgramKit): void {
  const { ctxOf, action } = kit;
  const watch = program
    .command('watch')
    .description('watchlists: be told (file, webhook) when behaviours with given pivot values are stored');

  const add = watch
    .command('add')
    .description('add a watch: conditions on pivot values (repeatable, at least one), where to notify its hits')
    .argument('<name>', 'unique name: letters, digits, ".", "_", "-"');
  for (const [flag, , , what] of WATCH_FLAGS) add.addOption(new Option(flag, `${what} (repeatable)`).argParser(collect));
  add
    .option('--file <path>', 'append each hit to this JSON-lines file (directory created when missing)')
    .option('--webhook <url>', 'POST each hit as JSON to this http(s) URL')
    .option('--retro', 'also record and notify hits for the matching behaviours already stored')
    .option('--json', 'one JSON object: the watch (webhook host only) and, with --retro, {behaviours, hits}')
    .addHelpText('after', ADD_HELP)
    .action(action((name: string, o: Record<string, unknown>, cmd: Command) => watchAddCommand(name, o, ctxOf(cmd, { logLevel: 'warn' }))));

  watch
    .command('list')
    .description('every watch: conditions, notification targets (webhook host only), creation time')
    .option('--json', 'JSON array')
    .action(action((o: { json?: boolean }, cmd: Command) => watchListCommand(o, ctxOf(cmd, { logLevel: 'warn' }))));

  watch
    .command('remove')
    .description('remove a watch and its recorded hits (exit 1 when there is no such watch)')
    .argument('<name>')
    .option('--json', 'print {"removed": NAME}')
    .action(action((name: string, o: { json?: boolean }, cmd: Command) => watchRemoveCommand(name, o, ctxOf(cmd, { logLevel: 'warn' }))));

  watch
    .command('hits')
    .description("a watch's hits, newest first: when, behaviour id, version (last_modification_date), conditions matched")
    .argument('<name>')
    .option('--since <date>', 'only hits recorded since (ISO-8601, YYYY-MM-DD or YYYYMMDD, UTC)')
    .option('--limit <n>', 'at most n hits', '100')
    .option('--offset <n>', 'skip the first n hits (paging)', '0')
    .option('--json', 'JSON array of {watch, behaviourId, lastModified, sha256, sandbox, matched, at}')
    .action(
      action((name: string, o: { since?: string; limit?: string; offset?: string; json?: boolean }, cmd: Command) =>
        watchHitsCommand(name, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );
}
