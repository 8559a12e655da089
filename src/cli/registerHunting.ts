import type { Command } from 'commander';
import { collect, type ProgramKit } from './context.js';
import { addPivotOption } from './pivotOptions.js';
import { SINCE_FORMS } from './sinceFlag.js';
import { PIVOT_FLAGS } from './commands/query.js';
import { WATCH_FLAGS } from './commands/watchFlags.js';

// command modules load when their command runs (a query does not load the workers' packages)
const loadHunt = () => import('./commands/hunt.js');
const loadWatch = () => import('./commands/watch.js');
const loadServe = () => import('./commands/serve.js');
const loadExport = () => import('./commands/export.js');

const ADD_HELP = `
Any one condition matching is a hit; each (watch, behaviour, version) is a hit once,
however often its documents are written again. Running workers see a new watch
within a few seconds. Hits are appended to --file as JSON lines and POSTed to
--webhook as JSON (retried; an undelivered one becomes a dead letter of stage
"watch", code WEBHOOK_FAILED). Only the webhook's host is ever shown or logged.

Example:
  sandtrail watch add apt-loader --behash 0e3e4f... --ja3 a0e9f5d64349fb13191bc781f81f42e1 \\
    --file ./alerts/apt-loader.jsonl --webhook soc --retro
  (soc: a webhook named in the configuration, SANDTRAIL_WEBHOOK_SOC=https://hooks.example/T0/B0/XX)`;

/** Hunting: pivot statistics, top values, related behaviours, file roll-ups, the read API, and watchlists that alert. */
export function registerHunting(program: Command, kit: ProgramKit): void {
  registerPivotReads(program, kit);
  registerExport(program, kit);
  const { ctxOf, action } = kit;
  const watch = program
    .command('watch')
    .description('watchlists: be told (file, webhook) when behaviours with given pivot values are stored');

  const add = watch
    .command('add')
    .description('add a watch: conditions on pivot values (repeatable, at least one), where to notify its hits')
    .argument('<name>', 'unique name: letters, digits, ".", "_", "-"');
  for (const [flag, , , what] of WATCH_FLAGS) addPivotOption(add, flag, `${what} (repeatable)`, collect);
  add
    .option('--file <path>', 'append each hit to this JSON-lines file (directory created when missing)')
    .option(
      '--webhook <name>',
      'POST each hit as JSON to the webhook of this name in the configuration (webhooks.NAME, SANDTRAIL_WEBHOOK_NAME=URL): the store keeps the name, never the URL',
    )
    .option('--retro', 'also record and notify hits for the matching behaviours already stored')
    .option(
      '--json',
      'one JSON object: the watch (its webhook by name, never the URL) and, with --retro, {behaviours, hits, undelivered, interrupted}',
    )
    .addHelpText('after', ADD_HELP)
    .action(
      action(async (name: string, o: Record<string, unknown>, cmd: Command) =>
        (await loadWatch()).watchAddCommand(name, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  watch
    .command('list')
    .description('every watch: conditions, notification targets (a webhook by name, never its URL), creation time')
    .option('--json', 'JSON array')
    .action(
      action(async (o: { json?: boolean }, cmd: Command) => (await loadWatch()).watchListCommand(o, ctxOf(cmd, { logLevel: 'warn' }))),
    );

  watch
    .command('remove')
    .description('remove a watch and its recorded hits (exit 1 when there is no such watch)')
    .argument('<name>')
    .option('--json', 'print {"removed": NAME}')
    .action(
      action(async (name: string, o: { json?: boolean }, cmd: Command) =>
        (await loadWatch()).watchRemoveCommand(name, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  watch
    .command('hits')
    .description("a watch's hits, newest first: when, behaviour id, version (last_modification_date), conditions matched")
    .argument('<name>')
    .option('--since <when>', `only hits recorded since: ${SINCE_FORMS}`)
    .option('--limit <n>', 'at most n hits', '100')
    .option('--offset <n>', 'skip the first n hits (paging)', '0')
    .option('--json', 'JSON array of {watch, behaviourId, lastModified, sha256, sandbox, matched, at}')
    .action(
      action(async (name: string, o: { since?: string; limit?: string; offset?: string; json?: boolean }, cmd: Command) =>
        (await loadWatch()).watchHitsCommand(name, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );
}

/** The reads: pivot, top, related, file, and serve (the same reads over HTTP). */
function registerPivotReads(program: Command, kit: ProgramKit): void {
  const { ctxOf, action } = kit;
  const pivot = program
    .command('pivot')
    .description('statistics of one pivot value (behaviours, files, sandboxes, verdicts, first/last seen) and its newest behaviours');
  for (const [flag, , kind, what] of PIVOT_FLAGS) if (kind) addPivotOption(pivot, flag, what);
  pivot
    .option('--limit <n>', 'newest behaviours shown (offset + limit at most 10000)', '20')
    .option('--offset <n>', 'skip that many of the newest (paging)', '0')
    .option('--json', 'one JSON object: the figures and the page of behaviours')
    .action(
      action(async (o: Record<string, unknown>, cmd: Command) => (await loadHunt()).pivotCommand(o, ctxOf(cmd, { logLevel: 'warn' }))),
    );

  program
    .command('top')
    .description('the most frequent values of one pivot kind, with the same figures per value')
    .argument('<kind>', 'behash, sigma-rule (or sigma_rule_id), ja3, ja3s or dropped-sha256 (or dropped_sha256)')
    .option('--since <when>', `only behaviours analysed since: ${SINCE_FORMS}`)
    .option('--limit <n>', 'values shown (at most 100)', '10')
    .option('--json', 'JSON array')
    .action(
      action(async (kind: string, o: { since?: string; limit?: string; json?: boolean }, cmd: Command) =>
        (await loadHunt()).topCommand(kind, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  program
    .command('related')
    .description('for each pivot value of a behaviour, how many others share it; the others ranked by values shared')
    .argument('<id>', 'behaviour id <sha256>_<sandbox name>')
    .option('--limit <n>', 'related behaviours shown', '20')
    .option('--json', 'one JSON object')
    .action(
      action(async (id: string, o: { limit?: string; json?: boolean }, cmd: Command) =>
        (await loadHunt()).relatedCommand(id, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  program
    .command('file')
    .description(
      "every sandbox's report of one file merged: verdicts, behash, sigma rules, JA3/JA3S, dropped files, MITRE techniques, hosts, IPs, each with the sandboxes that saw it",
    )
    .argument('<hash>', 'SHA-256, MD5 or SHA-1 of the file')
    .option('--json', 'one JSON object')
    .action(
      action(async (hash: string, o: { json?: boolean }, cmd: Command) =>
        (await loadHunt()).fileCommand(hash, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  program
    .command('serve')
    .description(
      'serve the store through the GTI v3 API envelope (file_behaviours, files/{hash}/behaviours, private/files) plus /api/v3/sandtrail/ pivot searches and a hunting page at /',
    )
    .option('--port <n>', 'port (default serve.port, 8080; env SANDTRAIL_SERVE_PORT)')
    .option('--host <addr>', 'address (default serve.host, 127.0.0.1; env SANDTRAIL_SERVE_HOST; beyond loopback needs serve.apiKeys)')
    .addHelpText(
      'after',
      "\nKeys asked in x-apikey: serve.apiKeys (env SANDTRAIL_SERVE_API_KEYS, comma-separated).\nLinks in answers start with serve.publicUrl when set (env SANDTRAIL_SERVE_PUBLIC_URL), else the request's Host.",
    )
    .action(
      action(async (o: { port?: string; host?: string }, cmd: Command) => {
        const { serveCommand, serveContext } = await loadServe();
        return serveCommand(await serveContext(ctxOf(cmd), o));
      }),
    );
}

const EXPORT_HELP = `
Ids derive from content (STIX: UUIDv5, SCOs as STIX 2.1 section 2.9 says; MISP: the
same for uuids): exporting the same selection again gives the same objects, so a TIP
updates them instead of adding copies. The export is a stream: memory stays that of one
page of the store, whatever the selection holds.

Examples:
  sandtrail export --behash 0e3e4f... > cluster.stix.json
  sandtrail export --watch apt-loader --since 7d --format misp --out apt-loader.misp.json
  sandtrail export --sigma-rule 5a1b... --save loader-sigma   # a TAXII collection of serve`;

/** export: a selection as a STIX 2.1 bundle or a MISP event. */
function registerExport(program: Command, kit: ProgramKit): void {
  const { ctxOf, action } = kit;
  const cmd = program
    .command('export')
    .description('the behaviours of a pivot value, a watch or a window as a STIX 2.1 bundle or a MISP event (stdout or --out)');
  for (const [flag, , kind, what] of PIVOT_FLAGS) if (kind) addPivotOption(cmd, flag, what);
  cmd
    .option('--watch <name>', 'the behaviours a watch hit (with a pivot flag: those of them carrying it)')
    .option('--since <when>', `only behaviours analysed since: ${SINCE_FORMS}`)
    .option('--until <when>', 'only behaviours analysed before: the same forms')
    .option('--format <f>', 'stix (a STIX 2.1 bundle) or misp (a MISP event)', 'stix')
    .option('--out <file>', 'write to this file (replaced only once the export is whole) instead of stdout')
    .option('--json', 'with --out: print {format, behaviours, objects, out} on stdout (with --save: {collection, name, behaviours, added})')
    .option('--save <name>', 'keep the export in the store as a TAXII 2.1 collection that serve offers (saving again adds what is new)')
    .addHelpText('after', EXPORT_HELP)
    .action(
      action(async (o: Record<string, unknown>, c: Command) => (await loadExport()).exportCommand(o, ctxOf(c, { logLevel: 'warn' }))),
    );
}
