import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SandtrailError } from '../../errors/index.js';
import { demoStoreFile, markDemoStore, openStore, type PivotKind } from '../../store/index.js';
import { writeOut, type CliContext } from '../context.js';
import { packageRoot } from '../packageRoot.js';
import { formatSummary, resolveMinutes, runBackfillCommand } from './backfill.js';

const EXAMPLES: [Exclude<PivotKind, 'sha256'>, string][] = [
  ['behash', '--behash'],
  ['sigma_rule_id', '--sigma-rule'],
  ['ja3', '--ja3'],
  ['ja3s', '--ja3s'],
  ['dropped_sha256', '--dropped-sha256'],
];

/**
 * `sandtrail demo`: ingests the bundled sample feed through the real queue into a fresh SQLite
 * file, then shows the most common value of each pivot and the behaviours it finds. It replaces
 * only a store it wrote itself (marked in the file's header), never a user's store or file.
 */
export async function demoCommand(opts: { feed?: string; ownStore: string }, ctx: CliContext): Promise<number> {
  const feed = opts.feed ?? join(packageRoot(), 'sample', 'feed');
  const sink = ctx.config.store;
  // the feed first: a demo that cannot run deletes nothing
  await resolveMinutes(`dir:${feed}`, undefined, undefined, ctx);
  const file = sink.startsWith('sqlite:') ? sink.slice('sqlite:'.length) : undefined;
  if (file !== undefined) {
    const kind = demoStoreFile(file);
    const own = resolve(file) === resolve(opts.ownStore);
    // only a store the demo wrote is replaced (or, at its own path, one an older version wrote)
    if (kind === 'demo' || kind === 'empty' || (own && kind === 'sqlite')) {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    } else if (kind !== 'missing') {
      throw new SandtrailError(
        'USAGE',
        `${file} exists and is not a store the demo wrote: the demo writes a fresh store and replaces only its own; give --store a new file (or remove ${file} yourself)`,
      );
    }
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
  if (file !== undefined) markDemoStore(file);
  return run.summary.batches.failed > 0 ? 1 : 0;
}
