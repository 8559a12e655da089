import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { PivotKind } from '../../store/index.js';
import { openStore } from '../../store/index.js';
import { writeOut, type CliContext } from '../context.js';
import { packageRoot } from '../packageRoot.js';
import { formatSummary, runBackfillCommand } from './backfill.js';

const EXAMPLES: [Exclude<PivotKind, 'sha256'>, string][] = [
  ['behash', '--behash'],
  ['sigma_rule_id', '--sigma-rule'],
  ['ja3', '--ja3'],
  ['ja3s', '--ja3s'],
  ['dropped_sha256', '--dropped-sha256'],
];

/**
 * `sandtrail demo`: ingests the bundled sample feed through the real queue into a fresh SQLite
 * file, then shows the most common value of each pivot and the behaviours it finds.
 */
export async function demoCommand(opts: { feed?: string; fresh?: boolean }, ctx: CliContext): Promise<number> {
  const feed = opts.feed ?? join(packageRoot(), 'sample', 'feed');
  const sink = ctx.config.store;
  if (opts.fresh !== false && sink.startsWith('sqlite:')) {
    const file = sink.slice('sqlite:'.length);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  }
  const run = await runBackfillCommand({ source: `dir:${feed}` }, ctx);
  await writeOut(`${formatSummary(run)}\n\nExample pivots (most frequent value of each):\n`);
  const store = openStore(sink);
  try {
    for (const [kind, flag] of EXAMPLES) {
      const [top] = await store.sink.top(kind, 1);
      if (!top) continue;
      const ids = await store.sink.query(kind, top.value);
      await writeOut(`\n$ npx sandtrail query ${flag} ${top.value} --store ${sink}\n`);
      for (const id of ids.slice(0, 5)) await writeOut(`  ${id}\n`);
      if (ids.length > 5) await writeOut(`  ... ${ids.length - 5} more\n`);
    }
    const dead = await store.dlq.list({ limit: 3 });
    if (dead.length) {
      await writeOut(`\n$ npx sandtrail dlq list --store ${sink}   (first ${dead.length})\n`);
      for (const d of dead) await writeOut(`  ${d.id}  ${d.code}  ${d.message.slice(0, 70)}\n`);
    }
    await writeOut(`\nMore reads on this store (docs/hunting.md):\n$ npx sandtrail top behash --limit 3 --store ${sink}\n`);
  } finally {
    await store.close();
  }
  return run.summary.batches.failed > 0 ? 1 : 0;
}
