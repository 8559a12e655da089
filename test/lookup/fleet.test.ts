import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'vitest';
import { runLookupCommand } from '../../src/cli/index.js';
import { createLogger } from '../../src/log/index.js';
import { openStore } from '../../src/store/index.js';
import { baseEnv, builtWorker } from '../support/cli.js';
import { accountApi } from '../support/apiAccounting.js';
import { cleanup, tempDir, testConfig } from '../support/env.js';
import { makeFakeFile, startFakeGti } from '../support/fakeGti.js';

const KEY = 'fleet-key-4411';

function startWorker(entry: 'lookup' | 'index', env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, [builtWorker(`${entry}-worker`)], {
    env: { ...baseEnv(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cleanup(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'close');
    }
  });
  return child;
}

test('lookup --no-workers hands the hashes to lookup and index worker processes on the same Redis, which share them and drain on SIGTERM', async () => {
  const files = [1, 2, 3, 4].map((n) => makeFakeFile(`fleet-${n}`, { behaviours: 2 }));
  const fake = await startFakeGti({ apiKey: KEY, files });
  cleanup(() => fake.close());
  const dir = tempDir();
  const config = await testConfig(dir, { gti: { apiKey: KEY, baseUrl: fake.baseUrl, user: 'fleet' }, lookup: { concurrency: 1 } });
  const account = accountApi(fake, config);
  const env = {
    REDIS_URL: config.redisUrl as string,
    SANDTRAIL_QUEUE_PREFIX: config.queuePrefix,
    SANDTRAIL_STORE: config.store,
    SANDTRAIL_LOG_LEVEL: 'info',
    GTI_APIKEY: KEY,
    GTI_BASE_URL: fake.baseUrl,
  };
  const workers = [startWorker('lookup', env), startWorker('lookup', env), startWorker('index', env)];
  const logs = workers.map((w) => {
    let text = '';
    w.stderr?.setEncoding('utf8').on('data', (s: string) => (text += s));
    return () => text;
  });
  // every worker is up (its signal handlers installed) before the work arrives
  for (const l of logs) await waitFor(() => l().includes('"worker started"'));
  const summary = await runLookupCommand(
    files.map((f) => f.sha256),
    { workers: false },
    { config, log: createLogger('silent') },
  );
  // what the service was asked and what the workers said beyond info, should a figure be off
  const seen = (): string =>
    [
      ...fake.requests.map((r) => `${r.method} ${r.path} ${r.status}`),
      ...logs.flatMap((l, i) =>
        l()
          .split('\n')
          .filter((line) => /"level":(40|50|60)/.test(line))
          .map((line) => `worker ${i}: ${line}`),
      ),
    ].join('\n');
  assert.deepEqual(summary?.counts, { ok: 4 }, seen());
  assert.equal(summary?.documents.indexed, 8, seen());
  assert.equal(summary?.api_units, 4, seen());
  account.summary(summary?.api_units);
  // the lookup workers took the hashes between them, and nothing was asked twice (their last log
  // line may still be in the pipe when the summary is ready: read once the 4th arrived, or after 10 s)
  const doneLines = (): number => logs.slice(0, 2).reduce((a, l) => a + (l().match(/"lookup done"/g) ?? []).length, 0);
  await waitFor(() => doneLines() >= 4, 10_000).catch(() => undefined);
  const done = logs.slice(0, 2).map((l) => (l().match(/"lookup done"/g) ?? []).length);
  assert.equal(
    done.reduce((a, b) => a + b, 0),
    4,
  );
  assert.equal(fake.requests.filter((r) => r.path.startsWith('/api/v3/files/')).length, 4);
  const store = openStore(config.store, config);
  cleanup(() => store.close());
  assert.equal(await store.sink.count(), 8);
  for (const w of workers) w.kill('SIGTERM');
  const codes = await Promise.all(workers.map(async (w) => (w.exitCode ?? (await once(w, 'exit'))[0]) as number));
  assert.deepEqual(codes, [0, 0, 0]);
  assert.ok(!logs.some((l) => l().includes(KEY)), 'the key is never logged');
});

async function waitFor(cond: () => boolean, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('timed out waiting for the workers to start');
    await new Promise((r) => setTimeout(r, 50));
  }
}
