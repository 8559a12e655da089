import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'vitest';
import { writeFeed } from '../../src/synth/index.js';
import { startCli, type StartedCli } from '../support/cli.js';
import { cleanup, tempDir, uniquePrefix } from '../support/env.js';
import { RedisServer } from '../support/redisServer.js';

/** Waits until `p` wrote `text` on stderr (or 30 s passed). */
async function logged(p: StartedCli, read: () => string, text: string): Promise<void> {
  for (let i = 0; i < 300 && !read().includes(text); i++) await sleep(100);
  assert.ok(read().includes(text), `never logged ${text}: ${read().slice(-1500)}`);
}

test('fleet workers stopped while Redis answers nothing (a frozen host) end within seconds, exit 130, saying so', async () => {
  const dir = tempDir();
  const feed = join(dir, 'feed');
  await writeFeed({ out: feed, seed: 5, start: '202611010000', minutes: 20, perMinute: 80, malformedRate: 0 });
  const redis = await RedisServer.start({ aof: false });
  cleanup(async () => {
    redis.thaw();
    await redis.stop();
  });
  const env = {
    REDIS_URL: redis.url,
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_STORE: `sqlite:${join(dir, 's.db')}`,
    SANDTRAIL_LOG_LEVEL: 'info',
  };
  const outputs: string[] = [];
  const start = (args: string[]): { p: StartedCli; err: () => string } => {
    const p = startCli(args, env);
    const i = outputs.push('') - 1;
    p.child.stderr?.on('data', (s: Buffer | string) => (outputs[i] += String(s)));
    cleanup(() => void p.child.kill('SIGKILL'));
    return { p, err: () => outputs[i] as string };
  };
  const feedWorker = start(['worker', 'feed']);
  const indexWorker = start(['worker', 'index']);
  await logged(feedWorker.p, feedWorker.err, 'worker started');
  await logged(indexWorker.p, indexWorker.err, 'worker started');
  const backfill = start(['backfill', '--source', `dir:${feed}`, '--no-workers', '--json']);
  // jobs in hand when Redis stops answering
  await logged(feedWorker.p, feedWorker.err, '"msg":"batch done"');
  redis.freeze();
  const t0 = Date.now();
  feedWorker.p.child.kill('SIGTERM');
  indexWorker.p.child.kill('SIGTERM');
  const [f, i] = await Promise.all([feedWorker.p.exited, indexWorker.p.exited]);
  const tookMs = Date.now() - t0;
  assert.equal(f.code, 130, feedWorker.err().slice(-1500));
  assert.equal(i.code, 130, indexWorker.err().slice(-1500));
  assert.ok(tookMs < 15_000, `the workers took ${tookMs} ms to end`);
  assert.match(feedWorker.err(), /Redis is unreachable or does not answer: stopping without draining/);
  backfill.p.child.kill('SIGKILL');
}, 90_000);
