import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Command, CommanderError } from 'commander';
import type { ConfigInput } from '../config/index.js';
import { errorCode, markLogged, messageOf, wasLogged } from '../errors/index.js';
import { createLogger, type Logger } from '../log/index.js';
import type { BudgetFlags } from './budget.js';
import { getCommand, PIVOT_FLAGS, queryCommand } from './commands/query.js';
import { ENV_HELP } from './envHelp.js';
import { createContext, libraryWarningsTo, writeOut, wroteOut, type CliContext, type GlobalOptions } from './context.js';
import type { ArtefactFlags } from './artefactFlags.js';
import { addPivotOption } from './pivotOptions.js';
import { refuseRepeatedOptions } from './refuseRepeatedOptions.js';
import { registerAdminCommands } from './registerAdmin.js';
import { registerHunting } from './registerHunting.js';
import { KEY_HELP, registerContractCommands, withArtefactOptions } from './registerContract.js';
import { lagMinutesFlag } from './countFlag.js';

// Command modules load when their command runs: the queue stack (BullMQ, ioredis, prom-client,
// the progress bar) is ~0.25 s of start-up that a query or a dead-letter listing does not need.
const loadBackfill = () => Promise.all([import('./commands/backfill.js'), import('./budget.js'), import('./artefactChoice.js')]);
const loadLive = () => import('./commands/live.js');
const loadQueue = () => import('../queue/index.js');
const loadRunner = () => import('../runner/index.js');

/** The store every command uses when none is chosen, and the demo's own instead of it. */
const DEFAULT_STORE = 'sqlite:./sandtrail.db';
const DEMO_STORE = 'sqlite:.data/demo.db';

/** Exit status of an error: 2 for a usage or configuration error (a missing required setting included), else 1. */
function exitCodeOf(err: unknown): number {
  const c = errorCode(err);
  return c === 'USAGE' || c === 'CONFIG_INVALID' ? 2 : 1;
}

/** Runs a long-running process; its fatal error becomes one JSON log line and exit status 1 (2 for a usage error). */
async function asLogged(log: Logger, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (err) {
    // a stage runner that stopped the process for this error has logged it, with its fix
    if (!wasLogged(err)) log.fatal({ code: errorCode(err) }, messageOf(err));
    return exitCodeOf(err);
  }
}

/** Builds the command tree; `run` receives each command's action and returns its exit code. */
export function buildProgram(env: NodeJS.ProcessEnv, setExit: (code: number) => void, onJson: () => void = () => undefined): Command {
  const program = new Command('sandtrail')
    .description('Ingest the GTI sandbox file-behaviour feed into a store threat hunters pivot on.')
    .version('0.1.0')
    .option('--config <file>', 'JSON config file (env SANDTRAIL_CONFIG)')
    .option('--redis-url <url>', 'Redis URL (env REDIS_URL); for a Redis Cluster some of its nodes, comma-separated')
    .option('--redis-cluster', 'the Redis URL names a node of a Redis Cluster (env SANDTRAIL_REDIS_CLUSTER; implied by a list)')
    .option(
      '--store <spec>',
      'where documents, dead letters and the batch log live: sqlite:FILE (default sqlite:./sandtrail.db) or es:URL (Elasticsearch) (env SANDTRAIL_STORE, or ELASTICSEARCH_URL for es:)',
    )
    .option('--sink <spec>', 'former name of --store, still accepted')
    .option('--queue-prefix <prefix>', 'BullMQ key prefix, to run several pipelines on one Redis (env SANDTRAIL_QUEUE_PREFIX)')
    .option('--log-level <level>', 'fatal|error|warn|info|debug|trace|silent (env SANDTRAIL_LOG_LEVEL)')
    .option('--log-format <format>', 'json|pretty|ecs (env SANDTRAIL_LOG_FORMAT)')
    .addHelpText('after', ENV_HELP)
    // every command's --help lists the global options too (inherited by the commands added below)
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError()
    .exitOverride();

  const ctxOf = (cmd: Command, defaults: Partial<GlobalOptions> = {}): CliContext => {
    const g = cmd.optsWithGlobals<GlobalOptions>();
    // the command's default level sits under the config file and the environment, as a default
    return createContext(g, env, {}, defaults.logLevel ? { logLevel: defaults.logLevel as ConfigInput['logLevel'] } : {});
  };
  const processCtxOf = (cmd: Command, worker: string): CliContext => {
    try {
      const ctx = ctxOf(cmd);
      libraryWarningsTo(ctx.log, { worker });
      return ctx;
    } catch (err) {
      // no configured logger yet: the default one, so the process's log stays JSON lines
      createLogger('info', { worker }).fatal({ code: errorCode(err) }, messageOf(err));
      markLogged(err);
      throw err;
    }
  };
  const action =
    <A extends unknown[]>(fn: (...args: A) => Promise<number>) =>
    async (...args: A): Promise<void> => {
      // commander passes the command last: its --json decides how a failure is reported on stdout
      const cmd = args.at(-1);
      if (cmd instanceof Command && cmd.opts<{ json?: boolean }>().json === true) onJson();
      setExit(await fn(...args));
    };

  program
    .command('normalize')
    .description('normalize feed lines (files or stdin; .bz2/.gz read transparently): documents to stdout, rejections to stderr')
    .argument('[file...]', 'feed batch files; stdin when none')
    .action(
      action(async (files: string[], _o, cmd: Command) =>
        (await import('./commands/normalize.js')).normalizeCommand(files, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  withArtefactOptions(
    program
      .command('backfill')
      .description('enqueue one feed job per minute of a range, process it, wait and summarize')
      .requiredOption('--source <spec>', 'dir:PATH (a directory of minute batch files) or api (the GTI feed API; needs GTI_APIKEY)')
      .option('--from <YYYYMMDDhhmm>', 'first minute (UTC); default: first minute found')
      .option('--to <YYYYMMDDhhmm>', 'last minute (UTC); default: last minute found')
      .option('--no-workers', 'only enqueue and wait: let fleet workers on the same Redis do the work')
      .option('--hourly', 'read whole hours of the range from hourly packages (YYYYMMDDhh .tar.bz2 of minute files)')
      .option('--json', 'print the summary as one JSON object')
      .option('--dry-run', 'print the API-unit estimate by quota rule and call nothing')
      .option('--max-api-units <n>', 'refuse to start when the estimate exceeds n API units')
      .option('--force', 'start even when the estimate exceeds the remaining daily allowance'),
  ).action(
    action(
      async (
        o: { source: string; from?: string; to?: string; workers: boolean; hourly?: boolean; json?: boolean } & BudgetFlags & ArtefactFlags,
        cmd: Command,
      ) => {
        const ctx = ctxOf(cmd, { logLevel: 'warn' });
        const [
          { backfillExitCode, formatSummary, resolveMinutes, runBackfillCommand },
          { estimateLine, estimateJson, guardBudget, maxApiUnitsOf },
          { artefactChoiceOf },
        ] = await loadBackfill();
        const artefacts = artefactChoiceOf(o);
        // checked whatever the source: a directory spends nothing, but a typo is still one
        maxApiUnitsOf(o);
        if (o.source === 'api') {
          const { minutes } = await resolveMinutes('api', o.from, o.to, ctx);
          const path = `/feeds/${ctx.config.feed.pathSpelling}`;
          const hours = o.hourly ? new Set(minutes.map((m) => m.slice(0, 10))).size : 0;
          const lines = o.hourly
            ? [estimateLine(`GET ${path}/hourly/{hour} (at most)`, hours, 'GET', `${path}/hourly/${minutes[0] ?? ''}`)]
            : [];
          lines.push(estimateLine(`GET ${path}/{minute}`, minutes.length, 'GET', `${path}/${minutes[0] ?? ''}`));
          const guard = await guardBudget(o, lines, ctx);
          if (!guard) return 0;
          guard.spend(lines.reduce((n, l) => n + l.count * l.apiUnitsEach, 0));
        } else if (o.dryRun) {
          await writeOut(
            o.json
              ? estimateJson({ lines: [], apiUnits: 0, atLeast: false })
              : 'estimated API units: 0 (a directory source calls no API)\n(dry run: nothing was called)\n',
          );
          return 0;
        }
        const run = await runBackfillCommand({ ...o, artefacts }, ctx);
        await writeOut(o.json ? `${JSON.stringify(run.summary)}\n` : `${formatSummary(run)}\n`);
        return backfillExitCode(run);
      },
    ),
  );

  withArtefactOptions(
    program
      .command('run')
      .description('live ingestion: enqueue each minute once publishable (from the saved cursor), run feed and index workers')
      .requiredOption('--source <spec>', 'api (the GTI feed API; needs GTI_APIKEY) or dir:PATH')
      .option('--start <cursor>', 'where to begin without a saved cursor: YYYYMMDDhhmm or YYYYMMDDhhmm-N (default: now - lag)')
      .option('--lag-minutes <n>', 'minutes after which a minute is published (default 60, env SANDTRAIL_LIVE_LAG_MINUTES)'),
  ).action(
    action(async (o: { source: string; start?: string; lagMinutes?: string } & ArtefactFlags, cmd: Command) =>
      (await loadLive()).runCommand(o, ctxOf(cmd)),
    ),
  );

  program
    .command('mirror')
    .description('download raw feed batches (verbatim bzip2, named by minute) into a directory; re-runs skip complete files')
    .requiredOption('--from <YYYYMMDDhhmm>', 'first minute (UTC)')
    .requiredOption('--to <YYYYMMDDhhmm>', 'last minute (UTC)')
    .requiredOption('--out <dir>', 'directory (ingest it later with --source dir:DIR)')
    .option('--json', 'summary as JSON')
    .option('--dry-run', 'print the API-unit estimate by quota rule and call nothing')
    .option('--max-api-units <n>', 'stop before the run would spend more than n API units')
    .option('--force', 'start even when the estimate exceeds the remaining daily allowance')
    .addHelpText('after', KEY_HELP)
    .action(
      action(async (o: { from: string; to: string; out: string; json?: boolean }, cmd: Command) =>
        (await import('./commands/mirror.js')).mirrorCommand(o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  program
    .command('status')
    .description('cursor, ingestion lag, queue depths, recent batch outcomes, gaps, alerts and dead-letter count')
    .option('--last <n>', 'recent batches to show', '10')
    .option('--json', 'one JSON object')
    .action(
      action(async (o: { json?: boolean; last?: string }, cmd: Command) =>
        (await loadLive()).statusCommand(o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  const worker = program
    .command('worker')
    .description('run a long-lived stage worker against a shared Redis (first SIGTERM drains, second forces)');
  worker
    .command('scheduler')
    .description('run the live scheduler alone (feed and index workers run as separate processes)')
    .option('--source <spec>', 'api or dir:PATH', 'api')
    .option('--start <cursor>', 'where to begin without a saved cursor: YYYYMMDDhhmm or YYYYMMDDhhmm-N')
    .option('--lag-minutes <n>', 'minutes after which a minute is published (default 60, env SANDTRAIL_LIVE_LAG_MINUTES)')
    .action(
      action(async (o: { source: string; start?: string; lagMinutes?: string }, cmd: Command) => {
        const ctx = processCtxOf(cmd, 'scheduler');
        const [{ parseCursor }, { runSchedulerProcess }] = await Promise.all([loadQueue(), loadRunner()]);
        const start = o.start ? parseCursor(o.start) : undefined;
        const lagMinutes = lagMinutesFlag(o.lagMinutes, ctx.config.live.lagMinutes);
        const config = Object.freeze({ ...ctx.config, live: { ...ctx.config.live, lagMinutes } });
        const log = ctx.log.child({ worker: 'scheduler' });
        // a long-running process reports even its last error as one JSON log line
        return asLogged(log, async () => ((await runSchedulerProcess(config, log, { sourceSpec: o.source, start })) ? 130 : 0));
      }),
    );
  for (const kind of ['feed', 'index'] as const) {
    worker
      .command(kind)
      .description(`run the ${kind} stage worker`)
      .action(
        action(async (_o, cmd: Command) => {
          const ctx = processCtxOf(cmd, kind);
          const log = ctx.log.child({ worker: kind });
          return asLogged(log, async () => {
            const { runWorkerProcess } = await loadRunner();
            return (await runWorkerProcess(`worker ${kind}`, ctx.config, log)) ? 130 : 0;
          });
        }),
      );
  }

  registerContractCommands(program, { ctxOf, action, asLogged, processCtxOf }, worker);

  const query = program
    .command('query')
    .description('ids of behaviours (and private:<sha256> of private files) matching one pivot (hashes match case-insensitively)');
  for (const [flag, , , what] of PIVOT_FLAGS) addPivotOption(query, flag, what);
  query
    .option('--json', 'print a sorted JSON array of ids')
    .action(action((o: Record<string, unknown>, cmd: Command) => queryCommand(o, ctxOf(cmd, { logLevel: 'warn' }))));

  program
    .command('get')
    .description('print one stored behaviour document (with its downloaded artefacts) or private file report (marked "private": true)')
    .argument('<id>', 'behaviour id <sha256>_<sandbox name>, or private:<sha256> (a bare SHA-256 also names a private file)')
    .option('--json', 'compact JSON on one line')
    .action(action((id: string, o: { json?: boolean }, cmd: Command) => getCommand(id, o, ctxOf(cmd, { logLevel: 'warn' }))));

  registerHunting(program, { ctxOf, action, asLogged, processCtxOf });
  registerAdminCommands(program, { ctxOf, action, asLogged, processCtxOf });

  program
    .command('demo')
    .description(
      `ingest the bundled sample feed into a fresh SQLite store (${DEMO_STORE} unless a store is chosen) and show example pivot queries`,
    )
    .option('--feed <dir>', 'feed directory (default: the bundled sample)')
    .action(
      action(async (o: { feed?: string }, cmd: Command) => {
        const ctx = ctxOf(cmd, { logLevel: 'warn' });
        const g = cmd.optsWithGlobals<GlobalOptions>();
        // the demo replaces its own SQLite store: never the default store a backfill may have filled
        const own = !(g.store ?? g.sink) && ctx.config.store === DEFAULT_STORE;
        const demoCtx = own ? { ...ctx, config: Object.freeze({ ...ctx.config, store: DEMO_STORE }) } : ctx;
        // a store is created with its file, never its directory: the demo's own directory is made here
        if (own) mkdirSync(dirname(DEMO_STORE.slice('sqlite:'.length)), { recursive: true });
        return (await import('./commands/demo.js')).demoCommand({ ...o, ownStore: DEMO_STORE.slice('sqlite:'.length) }, demoCtx);
      }),
    );

  program
    .command('gen-feed')
    .description(
      'write a synthetic feed (minute batch files and manifest.json) for demos and benchmarks; gen-feed --help lists its options',
    )
    .helpOption(false)
    .allowUnknownOption()
    .argument('[options...]', 'see: sandtrail gen-feed --help')
    .action(action(async (args: string[]) => (await import('./commands/genFeed.js')).genFeedCommand(args)));

  for (const c of [program, ...program.commands, ...program.commands.flatMap((c) => c.commands)]) {
    c.exitOverride();
    refuseRepeatedOptions(c);
  }
  return program;
}

/** CLI entry: maps usage errors to exit 2 and any other error to a one-line message and exit 1. */
export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let code = 0;
  let json = false;
  const program = buildProgram(
    env,
    (c) => (code = c),
    () => (json = true),
  );
  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // help asked for (--help, help, --version) is 0; help shown for a missing subcommand is a usage error
      const asked = err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help';
      return asked && err.exitCode === 0 ? 0 : 2;
    }
    if (!wasLogged(err)) process.stderr.write(`sandtrail: ${messageOf(err)}\n`);
    const exit = exitCodeOf(err);
    // a script reading --json gets the failure as JSON too, unless the command printed its own answer
    if (json && !wroteOut())
      await writeOut(`${JSON.stringify({ error: { code: errorCode(err) ?? null, message: messageOf(err), exit } })}\n`);
    return exit;
  }
}
