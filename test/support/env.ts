import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, onTestFinished } from 'vitest';
import { loadConfig, type Config, type ConfigInput } from '../../src/config/index.js';
import { ensureRedis, type RedisHandle } from '../../src/redis/index.js';

let shared: Promise<RedisHandle> | undefined;

/**
 * The Redis the test run started (test/support/globalSetup.ts), or a private one when a test file is
 * run on its own. Each test isolates itself with its own queue prefix.
 */
export async function testRedisUrl(): Promise<string> {
  const fromRunner = process.env.SANDTRAIL_TEST_REDIS_URL;
  if (fromRunner) return fromRunner;
  if (!shared) {
    shared = ensureRedis({ install: false });
    // stopped when the file's process ends, not after the first test that asked for it
    const h = await shared;
    h.unref();
    process.once('exit', () => void h.stop());
  }
  return (await shared).url;
}

/**
 * Runs `fn` when the current test ends, or when the file ends if called outside a test (vitest
 * refuses hooks registered from inside a running test).
 */
export function cleanup(fn: () => unknown): void {
  try {
    onTestFinished(async () => void (await fn()));
  } catch {
    afterAll(async () => void (await fn()));
  }
}

/** A fresh temporary directory removed when the test (or, outside a test, the file) ends. */
export function tempDir(label = 'sandtrail-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), label));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A queue prefix no other test uses. */
export function uniquePrefix(): string {
  return `t${randomBytes(5).toString('hex')}`;
}

/** A validated config for a test: its own prefix, its own SQLite file, fast stall detection. */
export async function testConfig(dir: string, over: ConfigInput = {}): Promise<Config> {
  return loadConfig({
    flags: {
      redisUrl: await testRedisUrl(),
      queuePrefix: uniquePrefix(),
      store: `sqlite:${join(dir, 'store.db')}`,
      logLevel: 'silent',
      ...over,
      worker: { lockDurationMs: 4000, stalledIntervalMs: 2000, ...over.worker },
      feed: { backoffMs: 100, ...over.feed },
      index: { backoffMs: 50, ...over.index },
    },
  });
}
