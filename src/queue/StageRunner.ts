import { DelayedError, Worker, type Job, type Processor } from './bullmq.js';
import type { Config } from '../config/index.js';
import { errorCode, markLogged, messageOf, SandtrailError, storeFaultOfReason, type ErrorCode } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { createRedis, type RedisClient } from './connection.js';

export interface StageRunnerOptions<D, R> {
  queue: string;
  stage: string;
  concurrency: number;
  redisUrl: string;
  config: Config;
  log: Logger;
  processor: Processor<D, R>;
  /** Called once when credentials are refused; the owner stops the process. */
  onFatal?: (err: Error) => void;
  /** Called each time one of its jobs ends, completed or failed. */
  onSettled?: () => void;
}

/**
 * Errors no retry can fix and every further job would meet: refused credentials, a damaged or
 * unwritable store. With what the operator must fix; the stage stops and keeps its jobs.
 */
const STOPPING_ERRORS: Partial<Record<ErrorCode, string>> = {
  GTI_AUTH: 'fix GTI_APIKEY',
  SINK_AUTH: 'fix the store credentials',
  STORE_DAMAGED: 'repair or restore the store',
  STORE_READONLY: 'make the store writable',
};

/** Whether an error code stops a stage (its job is put back, with no outcome of its own). */
export function stopsStage(code: string | undefined): boolean {
  return code !== undefined && Object.hasOwn(STOPPING_ERRORS, code);
}

/** Socket errors of a Redis outage (as opposed to errors of a job or a command). */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH']);
/** The same outage as a Redis Cluster client words it: a master down, its slots unserved. */
const CLUSTER_OUTAGE = /Too many Cluster redirections|CLUSTERDOWN|Failed to refresh slots cache|Connection is closed/;

/** Redis's answers to a user without the rights a command needs (ACL), or with a wrong password. */
const REFUSED_BY_REDIS = /\b(NOPERM|WRONGPASS|NOAUTH)\b|can't run this command/;
const REDIS_GRANT = "grant its user the queue prefix's keys and BullMQ's commands (see docs/fleet.md)";

/** How long a job is put aside after a fatal error (the process stops meanwhile). */
const FATAL_DELAY_MS = 60_000;

/**
 * The BullMQ worker behind a stage, with the lifecycle every stage shares: start once, stop
 * safely twice (drain, or force: active jobs are retried elsewhere once their lock expires),
 * and close the connection BullMQ was handed (it never closes one it did not create). Refused
 * credentials (GTI_AUTH, SINK_AUTH) and a damaged or unwritable store (STORE_DAMAGED,
 * STORE_READONLY) are fatal for the whole stage: one log line, `onFatal`, and every job put back
 * without spending an attempt, so nothing is dead-lettered for them and a fleet worker does not
 * fail the whole queue against a store only an operator can fix.
 */
export class StageRunner<D, R> {
  private worker: Worker<D, R> | undefined;
  private connection: RedisClient | undefined;
  private stopping: Promise<void> | undefined;
  private fatal: Error | undefined;
  /** A forced stop cut the connection: what the worker says about it afterwards is expected. */
  private forced = false;

  constructor(private readonly o: StageRunnerOptions<D, R>) {}

  start(): void {
    if (this.worker) return;
    const { config, stage, log } = this.o;
    this.connection = createRedis(this.o.redisUrl, config);
    this.worker = new Worker<D, R>(this.o.queue, (job, token, signal) => this.run(job, token, signal), {
      connection: this.connection,
      prefix: config.queuePrefix,
      concurrency: this.o.concurrency,
      lockDuration: config.worker.lockDurationMs,
      stalledInterval: config.worker.stalledIntervalMs,
      maxStalledCount: config.worker.maxStalledCount,
    });
    // an outage logs once, not once per reconnect attempt of each connection
    let redisDown = false;
    this.connection.on('ready', () => {
      if (redisDown) log.info({ stage }, 'Redis reachable again');
      redisDown = false;
    });
    this.worker.on('error', (err) => {
      if (this.forced) return;
      // rights taken from the Redis user while running (ACL): no retry can help, and BullMQ would try every 100 ms
      if (REFUSED_BY_REDIS.test(messageOf(err))) {
        if (!this.fatal)
          this.stopFor(
            new SandtrailError('REDIS_FORBIDDEN', `Redis refuses the ${stage} worker's commands (${messageOf(err)}): ${REDIS_GRANT}`),
          );
        return;
      }
      const isConnection = CONNECTION_CODES.has((err as { code?: string }).code ?? '') || CLUSTER_OUTAGE.test(messageOf(err));
      if (isConnection && redisDown) return;
      redisDown ||= isConnection;
      log.error({ stage, err: messageOf(err) }, isConnection ? `${stage} worker lost Redis (retrying)` : `${stage} worker error`);
    });
    this.worker.on('failed', (job, err) => {
      log.warn({ stage, job: job?.id, attempts: job?.attemptsMade, err: messageOf(err) }, `${stage} job failed`);
      this.o.onSettled?.();
    });
    this.worker.on('completed', () => this.o.onSettled?.());
  }

  private async run(job: Job<D, R>, token: string | undefined, signal: AbortSignal | undefined): Promise<R> {
    // after refused credentials no further request is made: jobs wait for fixed credentials
    if (this.fatal) return this.putAside(job, token);
    try {
      return await this.o.processor(job, token, signal);
    } catch (err) {
      // a store fault may arrive as the reason of an UnrecoverableError: its code leads the message
      const code = errorCode(err) ?? storeFaultOfReason(messageOf(err));
      const fix = code && STOPPING_ERRORS[code];
      if (!code || !fix) throw err;
      const message = messageOf(err).replace(`${code}: `, '');
      this.stopFor(err instanceof SandtrailError ? err : new SandtrailError(code, message, {}, { cause: err }), fix);
      return this.putAside(job, token);
    }
  }

  /** An error no retry can fix: said once, with its fix (unless its message names it), and the process told to stop. */
  private stopFor(fatal: SandtrailError, fix?: string): void {
    const message = fatal.message.replace(`${fatal.code}: `, '');
    if (!this.fatal) this.o.log.fatal({ stage: this.o.stage, code: fatal.code }, `${fix ? `${message}: ${fix}` : message}; stopping`);
    markLogged(fatal);
    this.fatal ??= fatal;
    this.o.onFatal?.(fatal);
  }

  private async putAside(job: Job<D, R>, token: string | undefined): Promise<never> {
    await job.moveToDelayed(Date.now() + FATAL_DELAY_MS, token);
    throw new DelayedError();
  }

  stop(force = false): Promise<void> {
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    const release = (): void => this.connection?.disconnect();
    if (force) {
      // the connection goes first: an active job's end (its processor failing on a store closed
      // under it) is then never recorded, and the job is taken again once its lock expires,
      // without spending one of its attempts. BullMQ's close, when a drain already started it,
      // waits for the active jobs whatever `force` says: a forced stop does not wait for it.
      this.forced = true;
      release();
      const closing = worker.close(true).catch(() => undefined);
      return this.stopping ? Promise.resolve() : closing;
    }
    return (this.stopping ??= worker.close(false).finally(release));
  }
}
