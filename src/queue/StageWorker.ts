import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import type { BehaviourDoc } from '../normalize/index.js';
import type { Store } from '../store/index.js';
import type { SinkDoc } from '../wire/index.js';
import type { ChunkTransport } from './ChunkTransport.js';
import type { Queues } from './createQueues.js';
import type { FeedJobData } from './names.js';

/** A worker with the shared lifecycle: start once, stop (drain, or force) safely twice. */
export interface StageWorker {
  start(): void;
  stop(force?: boolean): Promise<void>;
}

/** What every stage worker of a process is built with. */
export interface StageWorkerOptions {
  redisUrl: string;
  config: Config;
  store: Store;
  queues: Queues;
  log: Logger;
  /** Called once when the upstream refuses the credentials: the process must stop, not retry. */
  onFatal?: (err: Error) => void;
  /**
   * Told each time a job of the worker ends (completed or failed): a task of the same process
   * waiting for its jobs looks again at once instead of at its next poll.
   */
  onSettled?: () => void;
  /**
   * Told about each document a feed job accepts, when the job asks for artefacts (its data's
   * `artefacts`): the artefact capability queues the downloads from here.
   */
  onFeedDoc?: (doc: BehaviourDoc, job: FeedJobData) => Promise<void>;
  /**
   * Told, after each write of an index job, about the documents written as new state (`ok`, not
   * stale): the watch capability matches them. Throwing fails the job (it is retried).
   */
  onStored?: (docs: readonly SinkDoc[]) => Promise<void>;
  /**
   * How producers (feed, lookup) hand chunks to the index stage: in memory to the index thread of
   * this process, or, by default, as index jobs through Redis.
   */
  transport?: ChunkTransport;
  /**
   * The clock retention is judged by (ms since the epoch; default the system's): a run on a
   * simulated clock (the month soak) hands the store and the index stage the same one.
   */
  now?: () => number;
}
