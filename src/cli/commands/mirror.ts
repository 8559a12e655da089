import { SandtrailError } from '../../errors/index.js';
import { mirrorBatches } from '../../feed/index.js';
import { createRedis } from '../../queue/index.js';
import { ledgerClient, QuotaLedger } from '../../quota/index.js';
import { apiUnitsOf, estimateLine, guardBudget, type BudgetFlags } from '../budget.js';
import { writeOut, type CliContext } from '../context.js';
import { stopOnSignals } from '../stopOnSignals.js';
import { isMinuteId, minuteRange } from '../../minute/index.js';

/** `sandtrail mirror`: raw batches of a range into a directory, skipping files already complete. */
export async function mirrorCommand(
  opts: { from: string; to: string; out: string; json?: boolean } & BudgetFlags,
  ctx: CliContext,
): Promise<number> {
  const { gti, feed, redisUrl, queuePrefix } = ctx.config;
  for (const [flag, v] of [
    ['--from', opts.from],
    ['--to', opts.to],
  ] as const) {
    if (!isMinuteId(v)) throw new SandtrailError('USAGE', `${flag} must be a UTC minute YYYYMMDDhhmm, got "${v}"`);
  }
  if (opts.from > opts.to) throw new SandtrailError('USAGE', `--from ${opts.from} is after --to ${opts.to}`);
  const minutes = [...minuteRange(opts.from, opts.to)];
  const feedPath = `/feeds/${feed.pathSpelling}/${opts.from}`;
  const guard = await guardBudget(opts, [estimateLine(`GET /feeds/${feed.pathSpelling}/{minute}`, minutes.length, 'GET', feedPath)], ctx);
  if (!guard) return 0;
  if (!gti.apiKey) throw new SandtrailError('USAGE', 'mirror reads the GTI feed API: set GTI_APIKEY');
  const redis = redisUrl ? createRedis(redisUrl, ctx.config) : undefined;
  const ledger = redis ? new QuotaLedger(redis, queuePrefix) : undefined;
  // the first signal drops the download under way (no .part is left) and prints what was done
  const stop = stopOnSignals('the download under way is dropped');
  try {
    const client = ledgerClient(gti, { ledger, beforeCall: (c) => guard.spend(apiUnitsOf(c.method, c.path)) });
    const summary = await mirrorBatches({
      client,
      minutes,
      out: opts.out,
      pathSpelling: feed.pathSpelling,
      decoder: feed.decoder,
      decoderThreads: feed.decoderThreads,
      // the feed's own retry pace (feed.attempts, feed.backoffMs)
      attempts: feed.attempts,
      backoffMs: feed.backoffMs,
      rateLimitDelayMs: feed.rateLimitDelayMs,
      signal: stop.signal,
      onMinute: (minute, outcome, reason) =>
        outcome === 'failed'
          ? ctx.log.error({ minute, outcome, err: reason }, 'mirror: minute failed')
          : ctx.log.info({ minute, outcome }, 'mirror'),
    });
    const { interrupted, ...counts } = summary;
    await writeOut(
      opts.json
        ? `${JSON.stringify(summary)}\n`
        : `mirror ${opts.from}..${opts.to} into ${opts.out}: ${Object.entries(counts)
            .map(([k, n]) => `${n} ${k.replace('_', ' ')}`)
            .join(', ')}${interrupted ? ' (interrupted: run it again to go on)' : ''}\n`,
    );
    return interrupted ? 130 : summary.failed > 0 ? 1 : 0;
  } finally {
    stop.dispose();
    redis?.disconnect();
  }
}
