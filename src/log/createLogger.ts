import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { ecsFormat } from '@elastic/ecs-pino-format';
import { destination, pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type * as PinoPretty from 'pino-pretty';
import { CENSOR, REDACT_PATHS, redactUrlCredentials, scrubFields } from './redact.js';

export type { Logger };

/** The log formats there are (the `logFormat` setting). */
export const LOG_FORMATS = ['json', 'pretty', 'ecs'] as const;
/** `json`: pino's own lines; `pretty`: one human-readable line per entry; `ecs`: Elastic Common Schema JSON. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Where log lines go: anything with a `write`; `isTTY` decides whether `pretty` colours. */
export interface LogDestination {
  write(line: string): unknown;
  isTTY?: boolean;
}

/** Optional parts of `createLogger`. */
export interface CreateLoggerOptions {
  /** Default `json`. */
  format?: LogFormat;
  /** Default stderr; tests pass their own stream. */
  destination?: LogDestination;
}

/** Namespace of sandtrail's own fields in `ecs` lines (`sandtrail.stage`, `sandtrail.batch`...). */
export const ECS_NAMESPACE = 'sandtrail';

type Fields = Record<string, unknown>;

/**
 * Structured logs go to stderr so stdout stays clean for `--json` output. Any field that could
 * hold a credential is redacted, whatever module logs it and in every format: credential fields
 * (at any depth, in request headers and in Error objects) and URL passwords in messages, error
 * messages and stacks.
 *
 * - `json` (default): one pino JSON object per line.
 * - `pretty`: pino-pretty run synchronously in this thread (no transport worker: nothing is lost
 *   on `process.exit` and nothing keeps the process alive), colours only on a TTY, one line per
 *   entry (an error's stack stays inside that line, as escaped JSON).
 * - `ecs`: @elastic/ecs-pino-format (`@timestamp`, `log.level`, `message`, `ecs.version`,
 *   `process.pid`, `host.hostname`, `service.name`, `error.*`). Our own fields, bound or per
 *   call, are written under `sandtrail.` (`sandtrail.stage`, `sandtrail.worker`...) so none can
 *   collide with an ECS field of another type (`source`, `url`) when shipped into an Elasticsearch
 *   that holds other ECS logs; fields already dotted are taken as ECS names and kept. An `err`
 *   given as a string becomes `error.message`.
 */
export function createLogger(level: string, bindings: Fields = {}, options: CreateLoggerOptions = {}): Logger {
  const format = options.format ?? 'json';
  const common: LoggerOptions = {
    level,
    redact: { paths: [...REDACT_PATHS], censor: CENSOR },
  };
  if (format === 'ecs') {
    const ecs = ecsFormat({ serviceName: 'sandtrail' });
    const ecsBindings = ecs.formatters?.bindings ?? ((b: Fields) => b);
    const ecsLog = ecs.formatters?.log ?? ((o: Fields) => o);
    const ecsOwn = (b: Fields): Fields => namespaced(scrubFields(b));
    const logger = pino(
      {
        ...ecs,
        ...common,
        base: { pid: process.pid, hostname: hostname(), ...bindings },
        serializers: { message: redactUrlCredentials },
        formatters: {
          ...ecs.formatters,
          bindings: (b) => {
            const { pid, hostname: host, name, ...own } = scrubFields(b);
            return ecsBindings({ pid, hostname: host, name, ...namespaced(own) });
          },
          log: (o) => {
            const { err, ...own } = scrubFields(o);
            const fields = namespaced(own);
            // a real Error becomes error.type/message/stack_trace in ecsLog; our code mostly logs messageOf(err)
            if (err instanceof Error) fields.err = err;
            else if (typeof err === 'string') fields['error.message'] = err;
            else if (err !== undefined) fields[`${ECS_NAMESPACE}.err`] = err;
            return ecsLog(fields);
          },
        },
      },
      (options.destination as DestinationStream | undefined) ?? destination({ fd: 2, sync: false }),
    );
    return formatChildBindings(logger, ecsOwn);
  }
  const plain: LoggerOptions = {
    ...common,
    base: { pid: process.pid, ...bindings },
    serializers: { msg: redactUrlCredentials },
    formatters: { bindings: scrubFields, log: scrubFields },
  };
  const stream = format === 'pretty' ? prettyStream(options.destination) : (options.destination as DestinationStream | undefined);
  return formatChildBindings(pino(plain, stream ?? destination({ fd: 2, sync: false })), scrubFields);
}

/**
 * pino runs `formatters.bindings` on the root's `base` only; `log.child({ stage })` bindings would
 * skip the scrubbing and the ECS namespace. Children (and theirs: they inherit this `child`)
 * pass the formatter in their options instead.
 */
function formatChildBindings(logger: Logger, format: (b: Fields) => Fields): Logger {
  const child = logger.child;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, bindings, {
      ...childOptions,
      formatters: { ...childOptions?.formatters, bindings: childOptions?.formatters?.bindings ?? format },
    });
  } as Logger['child'];
  return logger;
}

/** `key` → `sandtrail.key`; dotted keys are ECS names already (or were namespaced before: `log.bindings()` round trips). */
function namespaced(fields: Fields): Fields {
  const out: Fields = {};
  for (const [k, v] of Object.entries(fields)) out[k.includes('.') ? k : `${ECS_NAMESPACE}.${k}`] = v;
  return out;
}

/** pino-pretty as a plain function in front of a synchronous destination: each line is written before `log.x()` returns. */
function prettyStream(target?: LogDestination): DestinationStream {
  const out: LogDestination = target ?? destination({ fd: 2, sync: true });
  const isTTY = target ? target.isTTY === true : process.stderr.isTTY === true;
  // loaded only for this format (45 files otherwise read at every start-up)
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const pretty = prettyFactory({
    colorize: isTTY,
    translateTime: "UTC:yyyy-mm-dd'T'HH:MM:ss.l'Z'",
    singleLine: true,
    // pino-pretty prints error-like fields over several indented lines; keep them in the entry's line
    errorLikeObjectKeys: [],
  });
  return { write: (line: string) => void out.write(pretty(line)) };
}
