import { SandtrailError } from '../../errors/index.js';
import { emptyPruneReport, retentionCutoffs, type PruneOptions, type PruneReport, type RetentionDays } from '../../store/index.js';
import { withStore, writeOut, type CliContext } from '../context.js';

export interface PruneFlags {
  olderThan?: string;
  bookkeepingOlderThan?: string;
  dryRun?: boolean;
  json?: boolean;
}

/** A days flag: a whole number from 1 to 36500, or `off` where allowed; anything else is a usage error naming the flag. */
function daysFlag(flag: string, raw: string, allowOff: boolean): RetentionDays {
  const v = raw.trim();
  if (allowOff && v === 'off') return 'off';
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 36_500) {
    throw new SandtrailError('USAGE', `${flag} must be a whole number of days from 1 to 36500${allowOff ? ', or off' : ''}, got "${raw}"`);
  }
  return Number(v);
}

const iso = (sec: number | undefined): string | null => (sec === undefined ? null : new Date(sec * 1000).toISOString());

/**
 * `sandtrail prune`: removes what is older than the given days, by each record's own date
 * (behaviours by last_modification_date; dead letters, batch-log rows, watch hits and artefact
 * records by when they were written), in the same short steps the index stage's retention uses,
 * so writers sharing the store wait for one step at most. `--dry-run` counts only.
 */
export async function pruneCommand(opts: PruneFlags, ctx: CliContext): Promise<number> {
  const r = ctx.config.retention;
  const docs = opts.olderThan !== undefined ? daysFlag('--older-than', opts.olderThan, false) : r.days;
  if (docs === 'off' && opts.bookkeepingOlderThan === undefined) {
    throw new SandtrailError('USAGE', 'prune needs --older-than DAYS (or the setting retention.days)');
  }
  const book =
    opts.bookkeepingOlderThan !== undefined
      ? daysFlag('--bookkeeping-older-than', opts.bookkeepingOlderThan, true)
      : (r.bookkeepingDays ?? docs);
  if (docs === 'off' && book === 'off')
    throw new SandtrailError('USAGE', 'prune has nothing to do: give --older-than DAYS or --bookkeeping-older-than DAYS');
  const cut: PruneOptions = retentionCutoffs({ days: docs, bookkeepingDays: book }, Date.now());
  const total = await withStore(
    ctx,
    async (s) => {
      if (opts.dryRun) return s.retention.prune({ ...cut, dryRun: true });
      const sum = emptyPruneReport();
      // one bounded step at a time: another process writing the store waits for one step at most
      for (;;) {
        const step = await s.retention.prune({ ...cut, maxRows: r.stepRows });
        add(sum, step);
        if (step.done) return sum;
      }
    },
    // a count changes nothing: a store shared read-only is counted as it is
    opts.dryRun ? { readOnly: true } : { mustExist: true },
  );
  const out = {
    dryRun: opts.dryRun === true,
    behavioursBefore: iso(cut.behavioursBefore),
    bookkeepingBefore: iso(cut.bookkeepingBefore),
    ...total,
  };
  if (opts.json) {
    await writeOut(`${JSON.stringify(out)}\n`);
    return 0;
  }
  const verb = opts.dryRun ? 'would remove' : 'removed';
  const parts = [
    cut.behavioursBefore !== undefined ? `${total.behaviours} behaviour(s) last modified before ${out.behavioursBefore}` : null,
    cut.bookkeepingBefore !== undefined
      ? `${total.deadLetters} dead letter(s), ${total.batches} batch-log row(s), ${total.watchHits} watch hit(s), ${total.artefacts} artefact record(s), ${total.sharedObjects} shared collection object(s) written before ${out.bookkeepingBefore}`
      : null,
  ].filter((p): p is string => p !== null);
  await writeOut(`${verb} ${parts.join('; ')}\n`);
  if (total.partitions.length > 0) await writeOut(`${opts.dryRun ? 'would drop' : 'dropped'} ${total.partitions.join(', ')}\n`);
  return 0;
}

function add(sum: PruneReport, step: PruneReport): void {
  sum.behaviours += step.behaviours;
  sum.partitions.push(...step.partitions);
  sum.deadLetters += step.deadLetters;
  sum.batches += step.batches;
  sum.watchHits += step.watchHits;
  sum.sharedObjects += step.sharedObjects;
  sum.artefacts += step.artefacts;
  sum.done = step.done;
}
