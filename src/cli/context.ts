import { format } from 'node:util';
import { loadConfig, unknownEnvWarnings, type Config, type ConfigInput } from '../config/index.js';
import { SandtrailError } from '../errors/index.js';
import type { Command } from 'commander';
import { createLogger, type Logger } from '../log/index.js';
import { openStore, type Store, type StoreAccess } from '../store/index.js';

/** Options every command accepts (declared once on the root program). */
export interface GlobalOptions {
  config?: string;
  redisUrl?: string;
  redisCluster?: boolean;
  store?: string;
  /** Former name of --store. */
  sink?: string;
  queuePrefix?: string;
  logLevel?: string;
  logFormat?: string;
}

export interface CliContext {
  config: Config;
  log: Logger;
}

/**
 * Validates configuration once: flags > env (SANDTRAIL_*) > config file > the command's own
 * `defaults` > the schema's defaults.
 */
export function createContext(g: GlobalOptions, env: NodeJS.ProcessEnv, extra: ConfigInput = {}, defaults: ConfigInput = {}): CliContext {
  refuseEmpty(g);
  const flags: ConfigInput = { ...extra };
  if (g.redisUrl) flags.redisUrl = g.redisUrl;
  if (g.redisCluster) flags.redisCluster = true;
  if (g.store ?? g.sink) flags.store = g.store ?? g.sink;
  if (g.queuePrefix) flags.queuePrefix = g.queuePrefix;
  if (g.logLevel) flags.logLevel = g.logLevel as ConfigInput['logLevel'];
  // an unknown format is refused by the schema (CONFIG_INVALID, exit 2), like a bad level
  if (g.logFormat) flags.logFormat = g.logFormat as ConfigInput['logFormat'];
  const config = loadConfig({ flags, env, file: g.config ?? env.SANDTRAIL_CONFIG, defaults });
  const log = createLogger(config.logLevel, {}, { format: config.logFormat });
  // every command: a library's console warning (ioredis's about a password a Redis does not ask for) joins the log
  libraryWarningsTo(log);
  for (const u of unknownEnvWarnings(env)) log.warn({ variable: u.variable }, u.message);
  return { config, log };
}

/** The global options that take a value, as spelled on the command line. */
const VALUE_FLAGS: readonly [keyof GlobalOptions, string][] = [
  ['config', '--config'],
  ['redisUrl', '--redis-url'],
  ['store', '--store'],
  ['sink', '--sink'],
  ['queuePrefix', '--queue-prefix'],
  ['logLevel', '--log-level'],
  ['logFormat', '--log-format'],
];

/**
 * An empty value is a usage error, not "not given": `--store "$STORE"` with the variable unset
 * would otherwise fall through to the environment or the default (./sandtrail.db) and write there.
 */
function refuseEmpty(g: GlobalOptions): void {
  for (const [key, flag] of VALUE_FLAGS) {
    const v = g[key];
    if (typeof v === 'string' && v.trim() === '') {
      throw new SandtrailError('USAGE', `${flag} needs a value: it was given empty (an unset variable in "${flag} $VAR"?)`);
    }
  }
}

/**
 * A library's console warning (BullMQ's "IMPORTANT! Eviction policy is ...", once per connection)
 * joins the process's log, once, instead of breaking its JSON lines with raw text.
 */
export function libraryWarningsTo(log: Logger, bindings: Record<string, unknown> = {}): void {
  const said = new Set<string>();
  // eslint-disable-next-line no-console -- replaces the method: nothing is written to the console
  console.warn = (...args: unknown[]): void => {
    const text = format(...args);
    if (said.has(text)) return;
    said.add(text);
    log.warn({ ...bindings, source: 'library' }, text);
  };
}

/** Whether a command of this process has written to stdout (an error then adds nothing there). */
let wrote = false;

/** True once writeOut was called. */
export function wroteOut(): boolean {
  return wrote;
}

/** Writes to stdout honouring backpressure, so piping into `head` or a slow consumer stays bounded. */
export async function writeOut(text: string): Promise<void> {
  wrote = true;
  // stored text can neither drive a terminal nor reorder or hide what is shown, piped or not
  // (`| less -R`, `| cat`); inside JSON the escapes are JSON's own, so --json parses back exact
  const shown = escapeControls(text, '\n\t');
  if (!process.stdout.write(shown)) await new Promise<void>((r) => process.stdout.once('drain', r));
}

/** The escapes of the control characters that have a short one. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * `text` with its control characters (C0, DEL and C1) and the invisible characters that reorder
 * or hide text (bidi controls such as U+202E, zero-width spaces and joiners, the BOM) written as
 * escapes (`\t`, `\u001b`, `\u202e`), but those in `keep`. Stored values come from sandbox
 * reports, which malware writes: an escape sequence in a rule id must not drive the hunter's
 * terminal, nor `invoice\u202egpj.exe` read as `invoiceexe.jpg`, nor a zero-width space make two
 * different behashes look alike. Each escape is a JSON escape too: JSON text stays JSON.
 */
export function escapeControls(text: string, keep = ''): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, (c) =>
    keep.includes(c) ? c : (SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
}

/** What buildProgram hands to command groups registered elsewhere. */
export interface ProgramKit {
  ctxOf(cmd: Command, defaults?: Partial<GlobalOptions>): CliContext;
  action<A extends unknown[]>(fn: (...args: A) => Promise<number>): (...args: A) => Promise<void>;
  asLogged(log: CliContext['log'], fn: () => Promise<number>): Promise<number>;
  /** A long-running process's context: a configuration it cannot start with is its one JSON log line too. */
  processCtxOf(cmd: Command, worker: string): CliContext;
}

/** commander's parser for a repeatable option: every value, in order. */
export const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

/**
 * Runs `fn` on the configured store, closed afterwards whatever happens. Read-only by default:
 * the store must exist (a mistyped --store is an error naming the path, not a new empty store)
 * and is not written; a command that changes it passes `{ mustExist: true }` or `{}`.
 */
export async function withStore<T>(ctx: CliContext, fn: (s: Store) => Promise<T>, access: StoreAccess = { readOnly: true }): Promise<T> {
  const store = openStore(ctx.config.store, ctx.config, access);
  try {
    // a cluster that cannot be reached is named in seconds, not after a read's full timeout
    await store.check();
    return await fn(store);
  } finally {
    await store.close();
  }
}
