import { Queue } from 'bullmq';
import type { Config, ConfigInput } from '../../src/config/index.js';
import { createLogger } from '../../src/log/index.js';
import { startOpsServer, type OpsServer } from '../../src/ops/index.js';
import { createQueues, PIPELINE_QUEUES, type Queues } from '../../src/queue/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { cleanup, testConfig } from './env.js';

/** An operations server over a test pipeline's queues and store (`over`: more settings, a Redis of the test's own), closed when the test ends. */
export async function startTestOps(
  dir: string,
  http: ConfigInput['http'],
  over: ConfigInput = {},
): Promise<{ server: OpsServer; queues: Queues; config: Config; store: Store }> {
  const config = await testConfig(dir, { ...over, http: { port: 0, ...http } });
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  const queues = createQueues(config.redisUrl as string, config);
  cleanup(() => queues.close());
  const all = PIPELINE_QUEUES.map((n) =>
    n === 'feed' ? queues.feed : n === 'index' ? queues.index : new Queue(n, { connection: queues.connection, prefix: config.queuePrefix }),
  );
  const server = await startOpsServer({
    config,
    log: createLogger('silent'),
    store,
    queues: all,
    readiness: { redis: () => queues.connection.ping(), store: () => store.dlq.count(), draining: () => false },
  });
  cleanup(() => server.close());
  return { server, queues, config, store };
}
