import { randomUUID } from 'node:crypto';
import { SingleBar } from 'cli-progress';
import { messageOf, SandtrailError } from '../../errors/index.js';
import {
  classifyHash,
  collectHashes,
  duplicatesNote,
  createLookupQueue,
  planLookup,
  RunBudget,
  runLookup,
  type HashInput,
  type LookupProgress,
  type LookupSummary,
} from '../../lookup/index.js';
import { closeQueues, superviseWorkers } from '../../runner/index.js';
import { createQueues } from '../../queue/index.js';
import { openStore, type Store } from '../../store/index.js';
import { estimateLine, guardBudget, maxApiUnitsOf, type BudgetFlags } from '../budget.js';
import { writeOut, type CliContext } from '../context.js';
import { openStoreAndRedis } from '../storeAndRedis.js';
import { dlqListCommand } from '../dlqListCommand.js';
import { artefactChoiceOf } from '../artefactChoice.js';
import { formatEta } from '../progress.js';
import type { ArtefactFlags } from '../artefactFlags.js';

export interface LookupArgs extends BudgetFlags, ArtefactFlags {
  file?: string[];
  json?: boolean;
  workers?: boolean;
  refresh?: boolean;
}

/** Exit status: 0 every hash answered (404 and "no behaviours" are answers), 1 some failed, 130 interrupted. */
export function lookupExitCode(s: LookupSummary): number {
  if (s.interrupted) return 130;
  // artefacts asked for and not had (too large, gone, failed) fail the command, as in fetch
  return (s.counts.failed ?? 0) + (s.counts.forbidden ?? 0) + (s.counts.budget ?? 0) + (s.artefacts?.failed ?? 0) > 0 ? 1 : 0;
}

/**
 * `sandtrail lookup`: every behaviour report of each file, through the lookup queue (one job per
 * hash), indexed like feed records. Refused hashes cost nothing; `--dry-run` calls nothing.
 */
export async function lookupCommand(args: string[], o: LookupArgs, ctx: CliContext): Promise<number> {
  // a hash given on the command line that is not one is a mistake in the command: nothing is asked
  const refused = args.filter((a) => !('hash' in classifyHash(a)));
  if (refused.length > 0) {
    throw new SandtrailError(
      'USAGE',
      `not an MD5, SHA-1 or SHA-256 (32, 40 or 64 hex characters): ${refused.map((a) => JSON.stringify(a)).join(', ')}`,
    );
  }
  const summary = await runLookupCommand(args, o, ctx);
  if (!summary) return 0;
  await print(summary, o.json, ctx.config.store);
  return lookupExitCode(summary);
}

/** The lookup itself: its summary, or undefined for --dry-run (the estimate was printed). */
export async function runLookupCommand(args: string[], o: LookupArgs, ctx: CliContext): Promise<LookupSummary | undefined> {
  const hashes = await collectHashes(args, o.file ?? [], (n) => process.stderr.write(duplicatesNote(n)));
  if (hashes.length === 0) {
    const files = o.file ?? [];
    throw new SandtrailError(
      'USAGE',
      files.length > 0 && args.length === 0
        ? `no hash in ${files.join(', ')} (blank lines and # comments are skipped): nothing to look up`
        : 'give hashes as arguments or --file LIST (one per line, - for stdin)',
    );
  }
  const valid = hashes.filter((h) => 'hash' in h);
  for (const h of hashes) if (!('hash' in h)) process.stderr.write(`sandtrail: refused "${h.given}": ${h.refused} (not requested)\n`);
  const choice = artefactChoiceOf(o);
  const kinds = choice?.kinds ?? [];
  const pages = `/files/{hash}/behaviours?limit=${ctx.config.lookup.pageSize}`;
  const left = await leftToFetch(hashes, o, ctx);
  // open lines: a hash's further pages, and its reports' artefacts, are known only from its answers
  const lines = [
    estimateLine(
      `GET ${pages} (one page per hash left to fetch; one more per ${ctx.config.lookup.pageSize} reports)`,
      left,
      'GET',
      `/files/x/behaviours`,
      left > 0,
    ),
  ];
  if (kinds.length)
    lines.push(
      estimateLine(
        `GET /file_behaviours/{id}/{${kinds.join('|')}} (one per report that has one: known once its reports are read)`,
        0,
        'GET',
        '/file_behaviours/x/pcap',
        left > 0,
      ),
    );
  const guard = await guardBudget(o, lines, ctx);
  if (!guard) return undefined;
  if (valid.length === 0) {
    // nothing to ask: every hash was refused, and that cost nothing
    const summary: LookupSummary = {
      hashes: hashes.map((h) => ({
        given: h.given,
        outcome: 'invalid',
        reports: 0,
        indexed: 0,
        rejected: 0,
        error: 'refused' in h ? h.refused : '',
      })),
      counts: { invalid: hashes.length },
      documents: { indexed: 0, rejected: 0 },
      api_units: 0,
      interrupted: false,
    };
    return summary;
  }
  if (!ctx.config.gti.apiKey) throw new SandtrailError('USAGE', 'lookup needs GTI_APIKEY');
  const { config, log } = ctx;
  // the store before Redis: a wrong --store ends the command here, before a private Redis is started
  const { store, redis } = await openStoreAndRedis(ctx, { spendsApiUnits: true });
  const queues = createQueues(redis.url, config, log);
  const queue = createLookupQueue(queues, config);
  const run = randomUUID();
  const maxApiUnits = maxApiUnitsOf(o);
  const budget = new RunBudget(queues.connection, RunBudget.keyOf(config.queuePrefix, run), maxApiUnits ?? Number.POSITIVE_INFINITY);
  const bar = progressBar();
  try {
    const out = await superviseWorkers({
      redisUrl: redis.url,
      privateRedis: redis.isPrivate,
      config,
      store,
      queues,
      log,
      kind: o.workers === false ? 'waiter' : 'lookup',
      task: async (signal, parts) => {
        const summary = await runLookup({
          queue,
          indexQueue: queues.index,
          store,
          hashes,
          run,
          prefix: config.queuePrefix,
          budget,
          maxApiUnits,
          refresh: o.refresh,
          artefacts: choice,
          onProgress: bar.update,
          signal,
          log,
          pause: parts.pause,
        });
        // downloads run apart from indexing; the command ends once they are over too
        // (fleet workers' downloads too, with --no-workers)
        if (choice) {
          summary.artefacts = await parts.artefacts().settle(run, signal);
        }
        return summary;
      },
    });
    bar.done();
    if (out.fatal) throw out.fatal;
    const summary = out.result as LookupSummary;
    if (out.signalled) summary.interrupted = true;
    // read once the workers are stopped: a job under way when a signal came finishes in the drain
    // and pays for its calls after the run's own count
    summary.api_units = await budget.spent();
    return summary;
  } finally {
    bar.done();
    await queue.close().catch(() => undefined);
    await closeQueues(queues, log);
    await store.close();
    await redis.stop();
  }
}

/**
 * Hashes the run will pay pages for: a re-run does not ask again for those an earlier run
 * finished (unless --refresh), so they are neither estimated nor weighed against the allowance.
 * Hashes an interrupted run fetched are counted (their chunks may be gone): an upper bound.
 */
async function leftToFetch(hashes: readonly HashInput[], o: LookupArgs, ctx: CliContext): Promise<number> {
  const valid = hashes.filter((h) => 'hash' in h).length;
  if (o.refresh || valid === 0) return valid;
  let store: Store | undefined;
  try {
    store = openStore(ctx.config.store, ctx.config, { readOnly: true });
    return (await planLookup({ store, hashes })).todo.length;
  } catch (err) {
    // no store yet (a first run): nothing is done, every hash is left
    ctx.log.debug({ err: messageOf(err) }, 'the batch log could not be read: every hash is estimated');
    return valid;
  } finally {
    await store?.close().catch(() => undefined);
  }
}

async function print(s: LookupSummary, json: boolean | undefined, storeSpec: string): Promise<void> {
  await writeOut(json ? `${JSON.stringify(s)}\n` : `${formatLookupSummary(s, storeSpec)}\n`);
}

/** The summary a lookup prints without --json. */
export function formatLookupSummary(s: LookupSummary, storeSpec: string): string {
  const counts = Object.entries(s.counts)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
  const lines = [
    `lookup: ${s.hashes.length} hash(es): ${counts}${s.interrupted ? ' (interrupted)' : ''}`,
    `  documents: ${s.documents.indexed} indexed, ${s.documents.rejected} rejected${s.documents.rejected ? ` (see: ${dlqListCommand(storeSpec)})` : ''}`,
    `  API units spent: ${s.api_units}`,
    ...(s.artefacts ? [`  artefacts: ${s.artefacts.completed} downloaded, ${s.artefacts.failed} failed (this run)`] : []),
    ...s.hashes.map(
      (h) => `  ${h.outcome.padEnd(13)} ${h.hash ?? h.given}  ${h.reports} report(s), ${h.indexed} indexed${h.error ? `  ${h.error}` : ''}`,
    ),
    // a skipped hash fetches nothing, its artefacts included: say how to have them
    ...(s.counts.skipped
      ? [`  skipped: finished by an earlier run; --refresh fetches them again${s.artefacts ? ' (with their artefacts)' : ''}`]
      : []),
  ];
  return lines.join('\n');
}

/** A bar with ETA on a terminal's stderr; silent otherwise. */
function progressBar(stream: NodeJS.WriteStream = process.stderr): { update(p: LookupProgress): void; done(): void } {
  if (!stream.isTTY) return { update: () => undefined, done: () => undefined };
  const bar = new SingleBar({
    stream,
    format: '[{bar}] {value}/{total} hashes {reports} reports ETA {eta_formatted}',
    barsize: 20,
    barCompleteChar: '#',
    barIncompleteChar: '.',
    hideCursor: false,
    etaBuffer: 20,
    fps: 5,
    formatTime: formatEta,
  });
  let started = false;
  let stopped = false;
  return {
    update(p) {
      if (stopped) return;
      if (!started) bar.start(p.total, p.done, { reports: p.reports });
      else bar.update(p.done, { reports: p.reports });
      started = true;
    },
    done() {
      if (started && !stopped) bar.stop();
      stopped = true;
    },
  };
}
