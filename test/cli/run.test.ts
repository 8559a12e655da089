import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { writeFeed } from '../../src/synth/index.js';
import { baseEnv, builtCli, runCli } from '../support/cli.js';
import { accountApi } from '../support/apiAccounting.js';
import { tempDir, testRedisUrl, uniquePrefix, cleanup } from '../support/env.js';
import { startFakeGti } from '../support/fakeGti.js';
import { addMinutes, msToMinute } from '../../src/minute/index.js';

const KEY = 'run-key-2718';

test('sandtrail run --source api catches up from --start, says so, stores the feed, reports its cursor, and drains on SIGTERM', async () => {
  const dir = tempDir();
  // five minutes that were published a while ago (lag 60 min)
  const start = msToMinute(Date.now() - 75 * 60_000);
  const manifest = await writeFeed({ out: join(dir, 'feed'), seed: 17, start, minutes: 5, perMinute: 8, malformedRate: 0 });
  const fake = await startFakeGti({ apiKey: KEY, feedDir: join(dir, 'feed') });
  cleanup(() => fake.close());
  const db = join(dir, 'run.db');
  const env = {
    ...baseEnv(),
    GTI_APIKEY: KEY,
    GTI_BASE_URL: fake.baseUrl,
    REDIS_URL: await testRedisUrl(),
    SANDTRAIL_QUEUE_PREFIX: uniquePrefix(),
    SANDTRAIL_STORE: `sqlite:${db}`,
    SANDTRAIL_LOG_LEVEL: 'info',
    SANDTRAIL_LIVE_TICK_MS: '200',
  };
  accountApi(fake, { redisUrl: env.REDIS_URL, queuePrefix: env.SANDTRAIL_QUEUE_PREFIX });
  const child = spawn(process.execPath, [builtCli(), 'run', '--source', 'api', '--start', start], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (log += s));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    let stored = 0;
    for (let i = 0; i < 300 && stored < manifest.expectedIds.length; i++) {
      await sleep(100);
      try {
        const conn = new BetterSqlite3(db, { readonly: true, fileMustExist: true });
        stored = (conn.prepare('SELECT count(*) AS n FROM behaviours').get() as { n: number }).n;
        conn.close();
      } catch {
        // not created yet
      }
    }
    assert.equal(stored, manifest.expectedIds.length);
    assert.match(log, /catching up \d+ minutes from \d{12}/);
    assert.ok(!log.includes(KEY), 'the key is never logged');

    let status: { cursor: string | null } = { cursor: null };
    for (let i = 0; i < 50 && status.cursor !== `${addMinutes(start, 5)}-0`; i++) {
      status = JSON.parse((await runCli(['status', '--json'], { env })).stdout) as { cursor: string | null };
      if (status.cursor !== `${addMinutes(start, 5)}-0`) await sleep(200);
    }
    assert.ok(status.cursor && status.cursor >= `${addMinutes(start, 5)}-0`, `cursor ${status.cursor}`);
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    // the shutdown reports itself step by step, as a fleet worker's does
    for (const step of ['workers drained', 'Redis connections closed', 'store closed', 'live ingestion stopped'])
      assert.ok(log.includes(`"msg":"${step}"`), `${step}: ${log.slice(-1500)}`);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
