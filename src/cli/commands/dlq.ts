import { replayDeadLetters, type DeadLetterStage } from '../../dlq/index.js';
import { SandtrailError } from '../../errors/index.js';
import { openStore, type Store } from '../../store/index.js';
import { writeOut, type CliContext } from '../context.js';

async function withStore<T>(ctx: CliContext, fn: (s: Store) => Promise<T>): Promise<T> {
  const store = openStore(ctx.config.sink, ctx.config);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export async function dlqList(opts: { json?: boolean; limit?: string; stage?: string; batch?: string }, ctx: CliContext): Promise<number> {
  if (opts.stage && opts.stage !== 'normalize' && opts.stage !== 'index')
    throw new SandtrailError('USAGE', '--stage must be normalize or index');
  const limit = opts.limit ? Number(opts.limit) : 1000;
  if (!Number.isInteger(limit) || limit <= 0) throw new SandtrailError('USAGE', '--limit must be a positive integer');
  return withStore(ctx, async (s) => {
    const rows = await s.dlq.list({ limit, stage: opts.stage as DeadLetterStage | undefined, batch: opts.batch });
    if (opts.json) {
      await writeOut(`${JSON.stringify(rows)}\n`);
    } else {
      const total = await s.dlq.count();
      for (const r of rows) {
        const msg = r.message.length > 80 ? `${r.message.slice(0, 77)}...` : r.message;
        await writeOut(`${r.id}\t${r.code}\t${r.path ?? ''}\t${msg}\n`);
      }
      process.stderr.write(`${rows.length} of ${total} dead letter(s) shown\n`);
    }
    return 0;
  });
}

export async function dlqShow(id: string, opts: { json?: boolean }, ctx: CliContext): Promise<number> {
  return withStore(ctx, async (s) => {
    const e = await s.dlq.get(id);
    if (!e) {
      process.stderr.write(`sandtrail: no dead letter "${id}"\n`);
      return 1;
    }
    await writeOut(`${opts.json ? JSON.stringify(e) : JSON.stringify(e, null, 2)}\n`);
    return 0;
  });
}

export async function dlqReplay(ids: string[], opts: { all?: boolean; json?: boolean }, ctx: CliContext): Promise<number> {
  if (!opts.all && ids.length === 0) throw new SandtrailError('USAGE', 'dlq replay needs --all or one or more ids');
  if (opts.all && ids.length > 0) throw new SandtrailError('USAGE', 'dlq replay takes --all or ids, not both');
  return withStore(ctx, async (s) => {
    const r = await replayDeadLetters(s.dlq, s.sink, opts.all ? { all: true } : { ids });
    const out = { replayed: r.replayed, still_rejected: r.stillRejected, retryable: r.retryable, remaining: await s.dlq.count() };
    await writeOut(
      opts.json
        ? `${JSON.stringify(out)}\n`
        : `replayed ${out.replayed}, still rejected ${out.still_rejected}, retryable ${out.retryable}; ${out.remaining} left in the dead-letter store\n`,
    );
    return 0;
  });
}

export async function dlqPurge(opts: { json?: boolean }, ctx: CliContext): Promise<number> {
  return withStore(ctx, async (s) => {
    const n = await s.dlq.purge();
    await writeOut(opts.json ? `${JSON.stringify({ purged: n })}\n` : `purged ${n} dead letter(s)\n`);
    return 0;
  });
}
