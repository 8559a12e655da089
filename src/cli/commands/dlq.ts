import { createInterface } from 'node:readline/promises';
import { replayDeadLetters } from '../../dlq/index.js';
import { SandtrailError } from '../../errors/index.js';
import { createWatchHook, redeliverNotification, WebhookBreaker } from '../../watch/index.js';
import type { DeadLetterStage, Store } from '../../store/index.js';
import { escapeControls, withStore, writeOut, type CliContext } from '../context.js';
import { stopOnSignals } from '../stopOnSignals.js';
import { countFlag } from '../countFlag.js';

/** Runs `fn` on the configured store, which must exist: replay and purge change a store, never start one. */
const changeStore = <T>(ctx: CliContext, fn: (s: Store) => Promise<T>): Promise<T> => withStore(ctx, fn, { mustExist: true });

export async function dlqList(
  opts: { json?: boolean; limit?: string; offset?: string; stage?: string; batch?: string },
  ctx: CliContext,
): Promise<number> {
  if (opts.stage && opts.stage !== 'normalize' && opts.stage !== 'index' && opts.stage !== 'watch')
    throw new SandtrailError('USAGE', '--stage must be normalize, index or watch');
  const limit = countFlag('--limit', opts.limit, 1000, { min: 1, max: 100_000 });
  const offset = countFlag('--offset', opts.offset, 0, { min: 0, max: 1_000_000_000 });
  return withStore(ctx, async (s) => {
    const filter = { stage: opts.stage as DeadLetterStage | undefined, batch: opts.batch };
    const rows = await s.dlq.list({ ...filter, limit, offset });
    const total = await s.dlq.count(filter);
    // a cut list says so, in both forms: scripts must not mistake a page for the whole
    const truncated = offset + rows.length < total;
    if (opts.json) {
      await writeOut(`${JSON.stringify({ total, offset, limit, truncated, entries: rows })}\n`);
    } else {
      for (const r of rows) {
        const msg = r.message.length > 80 ? `${r.message.slice(0, 77)}...` : r.message;
        // the feed's own tabs and line breaks escaped: one line per entry, four columns
        await writeOut(`${[r.id, r.code, r.path ?? '', msg].map((v) => escapeControls(v)).join('\t')}\n`);
      }
      const next = truncated ? `; more with --offset ${offset + rows.length}` : '';
      process.stderr.write(`${rows.length} of ${total} dead letter(s) shown${offset ? ` from ${offset}` : ''}${next}\n`);
    }
    return 0;
  });
}

export async function dlqShow(id: string, opts: { json?: boolean }, ctx: CliContext): Promise<number> {
  return withStore(ctx, async (s) => {
    const e = await s.dlq.get(id);
    if (!e) throw new SandtrailError('NOT_FOUND', `no dead letter "${id}"`);
    await writeOut(`${opts.json ? JSON.stringify(e) : JSON.stringify(e, null, 2)}\n`);
    return 0;
  });
}

export async function dlqReplay(ids: string[], opts: { all?: boolean; json?: boolean }, ctx: CliContext): Promise<number> {
  if (!opts.all && ids.length === 0) throw new SandtrailError('USAGE', 'dlq replay needs --all or one or more ids');
  if (opts.all && ids.length > 0) throw new SandtrailError('USAGE', 'dlq replay takes --all or ids, not both');
  // one for the whole replay: a webhook still down is skipped after a few failed tries
  const breaker = new WebhookBreaker();
  // the first signal ends the replay after the entry under way, with its summary; a second exits at once
  const stop = stopOnSignals('the entry under way finishes, the rest stay for the next replay');
  return changeStore(ctx, async (s) => {
    const r = await replayDeadLetters(s.dlq, s.sink, opts.all ? { all: true } : { ids }, {
      signal: stop.signal,
      maxDepth: ctx.config.feed.maxDepth,
      onStored: createWatchHook(s, ctx.log, { webhook: { targets: ctx.config.webhooks } }),
      redeliver: (entry) => redeliverNotification(s.watches, entry, { targets: ctx.config.webhooks }, breaker),
    });
    const out = {
      replayed: r.replayed,
      redelivered: r.redelivered,
      still_rejected: r.stillRejected,
      retryable: r.retryable,
      needs_source: r.needsSource,
      remaining: await s.dlq.count(),
      interrupted: r.interrupted,
    };
    if (r.notFound.length > 0) process.stderr.write(`sandtrail: no dead letter with id ${r.notFound.map((id) => `"${id}"`).join(', ')}\n`);
    if (opts.json) {
      await writeOut(`${JSON.stringify({ ...out, needs_source_batches: r.needsSourceBatches, not_found: r.notFound })}\n`);
    } else {
      await writeOut(
        `replayed ${out.replayed}${out.redelivered ? `, watch notifications delivered ${out.redelivered}` : ''}, still rejected ${out.still_rejected}, retryable ${out.retryable}, needing the source batch ${out.needs_source}; ${out.remaining} left in the dead-letter store${r.interrupted ? ' (interrupted: the rest were not tried; run the same replay again)' : ''}\n`,
      );
      if (r.needsSource > 0) {
        const shown = r.needsSourceBatches.slice(0, 10).join(', ');
        await writeOut(
          `only a prefix of ${r.needsSource} line(s) is kept: fix the source and backfill their batches again (${shown}${r.needsSourceBatches.length > 10 ? ', ...' : ''})\n`,
        );
      }
    }
    return r.interrupted ? 130 : r.notFound.length > 0 ? 1 : 0;
  }).finally(() => stop.dispose());
}

/**
 * `sandtrail dlq purge`: deletes every dead letter, only with --yes or once confirmed on a terminal.
 * Without --yes and without a terminal to ask on, it says how many would go and exits 2.
 */
export async function dlqPurge(opts: { json?: boolean; yes?: boolean }, ctx: CliContext): Promise<number> {
  return changeStore(ctx, async (s) => {
    const count = opts.yes ? undefined : await s.dlq.count();
    if (count !== undefined && count > 0) {
      const what = `dlq purge would delete ${count} dead letter(s)`;
      // a usage error like any other: with --json a script reads it on stdout too
      if (!process.stdin.isTTY || !process.stderr.isTTY) throw new SandtrailError('USAGE', `${what}: pass --yes to delete them`);
      if (!(await confirm(`${what}. Delete them? [y/N] `))) {
        process.stderr.write('nothing deleted\n');
        return 1;
      }
    }
    const n = count === 0 ? 0 : await s.dlq.purge();
    await writeOut(opts.json ? `${JSON.stringify({ purged: n })}\n` : `purged ${n} dead letter(s)\n`);
    return 0;
  });
}

/** Asks a yes/no question on the terminal; only "y" or "yes" is a yes. */
async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}
