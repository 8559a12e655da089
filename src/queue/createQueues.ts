import { Queue } from './bullmq.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { createRedis, type RedisClient } from './connection.js';
import { FEED_QUEUE, INDEX_QUEUE, QUEUE_STREAMS, type FeedJobData, type IndexJobData } from './names.js';

export interface Queues {
  feed: Queue<FeedJobData>;
  index: Queue<IndexJobData>;
  connection: RedisClient;
  close(): Promise<void>;
}

/**
 * Both queues with their retry policy. Finished feed jobs are kept a week (they are small and
 * make re-enqueues no-ops); index jobs carry data and are dropped as soon as they succeed.
 */
export function createQueues(redisUrl: string, config: Config, log?: Logger): Queues {
  const connection = createRedis(redisUrl, config);
  connection.on('error', () => undefined); // surfaced by the commands that use it
  const prefix = config.queuePrefix;
  const feed = new Queue<FeedJobData>(FEED_QUEUE, {
    connection,
    prefix,
    streams: QUEUE_STREAMS,
    defaultJobOptions: {
      attempts: config.feed.attempts,
      backoff: { type: 'exponential', delay: config.feed.backoffMs },
      removeOnComplete: { age: 7 * 24 * 3600, count: 50_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
  const index = new Queue<IndexJobData>(INDEX_QUEUE, {
    connection,
    prefix,
    streams: QUEUE_STREAMS,
    defaultJobOptions: {
      attempts: config.index.attempts,
      backoff: { type: 'exponential', delay: config.index.backoffMs },
      // Removed on success: a later backfill of the same batch must be able to add the same job id again.
      removeOnComplete: true,
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
  // Without a listener BullMQ prints each connection error as a raw multi-line dump on stderr;
  // logged once per outage instead, so stderr stays one JSON object per line.
  let down = false;
  const onError = (err: Error): void => {
    if (!down) log?.warn({ err: err.message }, 'queue connection error (retrying)');
    down = true;
  };
  connection.on('ready', () => (down = false));
  feed.on('error', onError);
  index.on('error', onError);
  let closing: Promise<void> | undefined;
  return {
    feed,
    index,
    connection,
    close: () =>
      (closing ??= (async () => {
        await Promise.allSettled([feed.close(), index.close()]);
        connection.disconnect();
      })()),
  };
}
