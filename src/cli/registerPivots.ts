import { Option, type Command } from 'commander';
import { fileCommand, pivotCommand, relatedCommand, topCommand } from './commands/hunt.js';
import { PIVOT_FLAGS } from './commands/query.js';
import { serveCommand, serveContext } from './commands/serve.js';
import type { ProgramKit } from './context.js';

/** Hunting reads: pivot statistics, top values, related behaviours, file roll-ups, and the read API. */
export function registerPivotCommands(program: Command, kit: ProgramKit): void {
  const { ctxOf, action } = kit;
  const pivot = program
    .command('pivot')
    .description('statistics of one pivot value (behaviours, files, sandboxes, verdicts, first/last seen) and its newest behaviours');
  for (const [flag, , kind, what] of PIVOT_FLAGS) if (kind) pivot.addOption(new Option(flag, what));
  pivot
    .option('--limit <n>', 'newest behaviours shown', '20')
    .option('--offset <n>', 'skip that many of the newest (paging)', '0')
    .option('--json', 'one JSON object: the figures and the page of behaviours')
    .action(action((o: Record<string, unknown>, cmd: Command) => pivotCommand(o, ctxOf(cmd, { logLevel: 'warn' }))));

  program
    .command('top')
    .description('the most frequent values of one pivot kind, with the same figures per value')
    .argument('<kind>', 'behash, sigma-rule, ja3, ja3s or dropped-sha256')
    .option('--since <date>', 'only behaviours analysed since (YYYY-MM-DD, YYYYMMDD or ISO-8601, UTC)')
    .option('--limit <n>', 'values shown', '10')
    .option('--json', 'JSON array')
    .action(
      action((kind: string, o: { since?: string; limit?: string; json?: boolean }, cmd: Command) =>
        topCommand(kind, o, ctxOf(cmd, { logLevel: 'warn' })),
      ),
    );

  program
    .command('related')
    .description('for each pivot value of a behaviour, how many others share it; the others ranked by values shared')
    .argument('<id>', 'behaviour id <sha256>_<sandbox name>')
    .option('--limit <n>', 'related behaviours shown', '20')
    .option('--json', 'one JSON object')
    .action(
      action((id: string, o: { limit?: string; json?: boolean }, cmd: Command) => relatedCommand(id, o, ctxOf(cmd, { logLevel: 'warn' }))),
    );

  program
    .command('file')
    .description(
      "every sandbox's report of one file merged: verdicts, behash, sigma rules, JA3/JA3S, dropped files, MITRE techniques, hosts, IPs, each with the sandboxes that saw it",
    )
    .argument('<hash>', 'SHA-256, MD5 or SHA-1 of the file')
    .option('--json', 'one JSON object')
    .action(action((hash: string, o: { json?: boolean }, cmd: Command) => fileCommand(hash, o, ctxOf(cmd, { logLevel: 'warn' }))));

  program
    .command('serve')
    .description(
      'serve the store through the GTI v3 API envelope (file_behaviours, files/{hash}/behaviours, private/files) plus /api/v3/sandtrail/ pivot searches and a hunting page at /',
    )
    .option('--port <n>', 'port (default serve.port, 8080)')
    .option('--host <addr>', 'address (default serve.host, 127.0.0.1; beyond loopback needs serve.apiKeys)')
    .action(action((o: { port?: string; host?: string }, cmd: Command) => serveCommand(serveContext(ctxOf(cmd), o))));
}
