import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { SandtrailError } from '../../errors/index.js';
import { conditionKey, normalizeWatch, type Store, type Watch, type WatchCondition, type WatchHit } from '../../store/index.js';
import { recordRetroHits, shownWebhook, webhookUrlInStore } from '../../watch/index.js';
import { stopOnSignals } from '../stopOnSignals.js';
import { dlqListCommand } from '../dlqListCommand.js';
import { withStore, writeOut, type CliContext } from '../context.js';
import { WATCH_FLAGS } from './watchFlags.js';
import { countFlag } from '../countFlag.js';
import { parseSince } from '../sinceFlag.js';

export interface WatchAddOptions {
  file?: string;
  webhook?: string;
  retro?: boolean;
  json?: boolean;
  [condition: string]: unknown;
}

/** A watch as printed: a webhook by its name (a URL an earlier version stored: its host only, its path or query often is the secret). */
function shown(w: Watch): Record<string, unknown> {
  return {
    name: w.name,
    conditions: w.conditions,
    notify: { ...w.notify, ...(w.notify.webhook ? { webhook: shownWebhook(w.notify.webhook) } : {}) },
    created_at: new Date(w.createdAt).toISOString(),
  };
}

const conditionText = (c: WatchCondition): string => `${c.kind}=${c.value}`;

function notifyText(w: Watch): string {
  const parts = [w.notify.file ? `file ${w.notify.file}` : '', w.notify.webhook ? `webhook ${shownWebhook(w.notify.webhook)}` : ''];
  return parts.filter(Boolean).join(', ') || 'record only';
}

const readStore = <T>(ctx: CliContext, fn: (store: Store) => Promise<T>): Promise<T> => withStore(ctx, fn, { readOnly: true });
/** Removing a watch changes an existing store; it never starts one. */
const changeStore = <T>(ctx: CliContext, fn: (store: Store) => Promise<T>): Promise<T> => withStore(ctx, fn, { mustExist: true });

/** `sandtrail watch add NAME (--behash V | ...)... [--file PATH] [--webhook NAME] [--retro]`. */
export async function watchAddCommand(name: string, o: WatchAddOptions, ctx: CliContext): Promise<number> {
  const conditions: WatchCondition[] = WATCH_FLAGS.flatMap(([, key, kind]) =>
    ((o[key] as string[] | undefined) ?? []).map((value) => ({ kind, value })),
  );
  if (conditions.length === 0) {
    throw new SandtrailError('USAGE', `watch add needs at least one condition: ${WATCH_FLAGS.map(([f]) => f.split(' ')[0]).join(', ')}`);
  }
  if (o.file === '' || o.webhook === '') throw new SandtrailError('USAGE', `--${o.file === '' ? 'file' : 'webhook'} needs a value`);
  if (o.file) checkHitFile(resolve(o.file));
  if (o.webhook) checkWebhook(o.webhook, ctx);
  // workers may run elsewhere in the tree: the file is fixed to where the operator meant it
  const notify = { ...(o.file ? { file: resolve(o.file) } : {}), ...(o.webhook ? { webhook: o.webhook } : {}) };
  // a watch may come before the first backfill, so a missing store is created; said, since a
  // mistyped --store would otherwise give a watch that never fires on the real one
  const spec = ctx.config.store;
  if (spec.startsWith('sqlite:') && !existsSync(spec.slice('sqlite:'.length))) {
    process.stderr.write(
      `sandtrail: no store at ${spec.slice('sqlite:'.length)} yet: creating it; the watch fires for behaviours stored there\n`,
    );
  }
  return withStore(
    ctx,
    async (store) => {
      const watch = await addOrResume(store, { name, conditions, notify, createdAt: Date.now() }, o.retro === true);
      const retro = o.retro ? await retroUntilSignal(store, watch, ctx) : undefined;
      if (o.json) {
        await writeOut(`${JSON.stringify({ watch: shown(watch), ...(retro ? { retro } : {}) })}\n`);
      } else {
        const lines = [`watch ${watch.name} added: ${watch.conditions.map(conditionText).join(', ')}; notify: ${notifyText(watch)}`];
        if (retro) {
          const delivery = retro.undelivered
            ? `; ${retro.undelivered} notification(s) could not be delivered and were dead-lettered (${dlqListCommand(ctx.config.store, ' --stage watch')})`
            : retro.hits && (watch.notify.file || watch.notify.webhook)
              ? ' and notified'
              : '';
          lines.push(`retro: ${retro.behaviours} stored behaviours match, ${retro.hits} new hits recorded${delivery}`);
          if (retro.interrupted) lines.push(`retro interrupted: run the same watch add --retro again to record the rest`);
        }
        await writeOut(`${lines.join('\n')}\n`);
      }
      return retro?.interrupted ? 130 : 0;
    },
    {},
  );
}

/**
 * Adds the watch; with `--retro`, a watch of that name with the same conditions and channels is
 * taken as it is, so an interrupted retro run is resumed by the same command.
 */
async function addOrResume(store: Store, asked: Watch, retro: boolean): Promise<Watch> {
  try {
    return await store.watches.add(asked);
  } catch (err) {
    const existing = retro && (err as { code?: string }).code === 'WATCH_EXISTS' ? await store.watches.get(asked.name) : null;
    if (!existing) throw err;
    const same = normalizeWatch({ ...asked, createdAt: existing.createdAt });
    // the same conditions in any order: a resumed run may name them otherwise
    const key = (w: typeof same): string => JSON.stringify([w.conditions.map((c) => conditionKey(c.kind, c.value)).sort(), w.notify]);
    if (key(same) !== key(existing)) throw err;
    process.stderr.write(`sandtrail: watch ${asked.name} exists as given: its retro run resumes\n`);
    return existing;
  }
}

/**
 * A --webhook names a webhook of this process's configuration: the store keeps the name, every
 * process that notifies reads the URL (often holding its secret) from its own configuration.
 */
function checkWebhook(name: string, ctx: CliContext): void {
  const configured = Object.keys(ctx.config.webhooks);
  if (Object.hasOwn(ctx.config.webhooks, name)) return;
  const how = 'webhooks.NAME in the config file, or SANDTRAIL_WEBHOOK_NAME=URL';
  const known = configured.length > 0 ? `configured: ${configured.sort().join(', ')}` : 'none is configured';
  throw new SandtrailError(
    'USAGE',
    name.includes('://')
      ? `--webhook takes the name of a configured webhook, not its URL (a URL often carries its secret, and the store would keep it): name it (${how}) and give the name; ${known}`
      : `--webhook ${name}: no webhook of that name in this configuration (${how}); ${known}`,
  );
}

/** A --file hits are appended to (its directories are made at the first hit): refused before the watch is stored when it is a directory. */
function checkHitFile(file: string): void {
  let isDirectory: boolean | undefined;
  try {
    isDirectory = statSync(file, { throwIfNoEntry: false })?.isDirectory();
  } catch (err) {
    // a path through a regular file (ENOTDIR), too long, looping links: no file could ever be made there
    throw new SandtrailError('USAGE', `--file ${file} cannot be a file: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  if (isDirectory) throw new SandtrailError('USAGE', `--file ${file} is a directory: give the file hits are appended to`);
}

/**
 * Records the retro hits; the first SIGINT/SIGTERM lets the hits under way finish (their
 * notifications included) and starts no other, the second exits at once.
 */
async function retroUntilSignal(store: Store, watch: Watch, ctx: CliContext): ReturnType<typeof recordRetroHits> {
  const stop = stopOnSignals('the notifications under way finish');
  try {
    return await recordRetroHits(store, watch, ctx.log, { signal: stop.signal, webhook: { targets: ctx.config.webhooks } });
  } finally {
    stop.dispose();
  }
}

/** `sandtrail watch list`. */
export async function watchListCommand(o: { json?: boolean }, ctx: CliContext): Promise<number> {
  return readStore(ctx, async (store) => {
    const watches = await store.watches.list();
    const stored = watches.filter((w) => webhookUrlInStore(w.notify.webhook)).map((w) => w.name);
    if (stored.length > 0) {
      process.stderr.write(
        `sandtrail: ${stored.join(', ')} keep${stored.length === 1 ? 's' : ''} a webhook URL in the store (written by an earlier version; it often carries a secret): remove and add again with a named webhook (--webhook NAME, webhooks.NAME in the configuration)\n`,
      );
    }
    if (o.json) await writeOut(`${JSON.stringify(watches.map(shown))}\n`);
    else if (watches.length === 0) await writeOut(`no watches in ${store.spec}\n`);
    else
      await writeOut(
        watches
          .map(
            (w) =>
              `${w.name}  ${w.conditions.map(conditionText).join(', ')}  (${notifyText(w)}; since ${new Date(w.createdAt).toISOString()})\n`,
          )
          .join(''),
      );
    return 0;
  });
}

/** `sandtrail watch remove NAME`: the watch and its hits. */
export async function watchRemoveCommand(name: string, o: { json?: boolean }, ctx: CliContext): Promise<number> {
  return changeStore(ctx, async (store) => {
    if (!(await store.watches.remove(name))) throw new SandtrailError('NOT_FOUND', `no watch named "${name}" in ${store.spec}`);
    await writeOut(o.json ? `${JSON.stringify({ removed: name })}\n` : `watch ${name} removed, with its hits\n`);
    return 0;
  });
}

const hitLine = (h: WatchHit): string =>
  `${new Date(h.at).toISOString()}  ${h.behaviourId}  v${h.lastModified}  ${h.matched.map(conditionText).join(', ')}\n`;

/** `sandtrail watch hits NAME [--since D] [--limit N] [--offset N]`: newest first. */
export async function watchHitsCommand(
  name: string,
  o: { since?: string; limit?: string; offset?: string; json?: boolean },
  ctx: CliContext,
): Promise<number> {
  const q = {
    since: o.since ? parseSince(o.since) : undefined,
    limit: countFlag('--limit', o.limit, 100, { min: 1, max: 100_000 }),
    offset: countFlag('--offset', o.offset, 0, { min: 0, max: 1_000_000_000 }),
  };
  return readStore(ctx, async (store) => {
    if (!(await store.watches.get(name))) throw new SandtrailError('NOT_FOUND', `no watch named "${name}" in ${store.spec}`);
    const hits = await store.watches.hits(name, q);
    if (o.json) await writeOut(`${JSON.stringify(hits)}\n`);
    else if (hits.length === 0)
      await writeOut(`no hits for ${name}${o.since ? ` since ${new Date(q.since as number).toISOString()}` : ''}\n`);
    else await writeOut(hits.map(hitLine).join(''));
    return 0;
  });
}
